"""`collection build` and `collection stats`: raw documents (PDF, spreadsheets, CSV, Office, HTML, Markdown)
to a flat folder of Markdown with a manifest beside it."""

__all__ = [
    "build",
    "hashing",
    "limits",
    "manifest",
    "naming",
    "pdf",
    "pdf_images",
    "pdf_probes",
    "pictures",
    "sources",
    "stats",
    "tokens",
]

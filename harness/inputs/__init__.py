"""What a run is given (settings, tasks, prompts, collections), checked before anything is written."""

__all__ = [
    "collections",
    "config",
    "config_sources",
    "evidence_files",
    "importers",
    "leakage",
    "leakage_cache",
    "limits",
    "page_filter",
    "page_images",
    "profiles",
    "prompts",
    "retrieval",
    "tasks",
]

"""Tables, plots and the viewer, from records; only `run` and `cli` import it."""

__all__ = [
    "agent_transcript",
    "dataset_counts",
    "end_table",
    "report",
    "run_selection",
    "runs",
    "summary",
    "viewer",
    "viewer_server",
    "viewer_site",
]

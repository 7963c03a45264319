"""The records of a run, typed, written and read back. Every trajectory line is one of a single discriminated
union of typed records (`events.AnyEvent`, told apart by its `event` field) and is read with it, each field
checked for its type; every other JSONL file by `records/jsonl.py`. What a line holds is read by attribute
everywhere (the viewer, `show`, the condensed log, the exports), never by key. An episode's diagnostics read the
events its log kept in memory (`TrajectoryLog.events`), not its file; imports build the same typed events, so a
peer's value of the wrong type fails before anything is written."""

__all__ = [
    "compact",
    "conversation",
    "episode_log",
    "episode_row",
    "events",
    "fact_counts",
    "fact_judgments",
    "failure_labels",
    "image_store",
    "reading",
    "results",
    "run_folder",
    "run_record",
    "run_settings",
    "sweep_record",
    "trajectory",
]

"""A run of many episodes into one run folder, and the commands that work on run folders."""

__all__ = [
    "annotate_facts",
    "annotate_failures",
    "backends",
    "executors",
    "judges",
    "leftovers",
    "model_factory",
    "replay",
    "repricing",
    "runner",
    "sweep",
]

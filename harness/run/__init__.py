"""A run of many episodes into one run folder, and the commands that work on run folders."""

__all__ = [
    "annotate_facts",
    "annotate_failures",
    "backends",
    "epochs",
    "executors",
    "judges",
    "leak_check",
    "leftovers",
    "model_factory",
    "planning",
    "protocol_plan",
    "replay",
    "repricing",
    "runner",
    "sweep",
]

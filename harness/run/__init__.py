"""A run of many episodes into one run folder, and the commands that work on run folders."""

__all__ = ["executors", "judging", "leak_check", "planning", "recompute", "runner", "sandboxing", "sweep"]

"""The run's sandbox backend: checked while planning, started on the driver and on each Ray node with its
tool list checked (and remembered per build), and what its sandboxes leave running swept."""

__all__ = ["backends", "leftovers"]

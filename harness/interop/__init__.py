"""Trajectories in other agents' formats: import them as run folders, export our episodes to them."""

__all__ = ["formats", "run_import"]

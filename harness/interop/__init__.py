"""Trajectories in other agents' formats: import them as run folders, export our episodes to them; our tasks as a
Harbor dataset."""

__all__ = ["formats", "harbor_runs", "run_import"]

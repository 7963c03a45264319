"""The local backend: each command a fresh bubblewrap container over the episode's tree."""

__all__ = ["backend"]

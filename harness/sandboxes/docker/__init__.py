"""The Docker backend: one container per episode, its commands through one server."""

__all__ = ["backend"]

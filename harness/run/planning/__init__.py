"""Planning a run: what it will do, checked and computed before anything is written or started."""

__all__ = ["labels", "model_factory", "pinned_packages", "plan"]

"""The E2B backend: one cloud sandbox per episode from the domain's template."""

__all__ = ["backend"]

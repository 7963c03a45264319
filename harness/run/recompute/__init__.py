"""A run's records computed again: `replay` re-grades or re-executes logged episodes, `report --prices`
reprices them."""

__all__ = ["replay", "repricing"]

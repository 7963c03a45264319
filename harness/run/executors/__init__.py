"""How a batch of episodes runs: on threads in this process or on a Ray cluster, chosen by name from one table."""

__all__ = ["batch", "failures", "ray", "table"]

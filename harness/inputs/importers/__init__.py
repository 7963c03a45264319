"""`python -m harness tasks import FORMAT ...`: task files and collections from other benchmarks' data."""

__all__ = ["findocmre", "mudabench"]

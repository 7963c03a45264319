"""`python -m harness tasks import FORMAT ...`: task files and collections from other benchmarks' data. The formats
are a table (formats.py), each a module planning typed task rows (rows.py); one engine (engine.py) imports them."""

__all__ = ["engine", "formats"]

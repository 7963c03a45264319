"""The builder of the eight starter domains, run by `python scripts/build_domains.py` (pipeline.py).

spec.py holds the types, reader.py the table reader the golds and the tasks' solutions share, sources.py the
pinned packages, splits.py and writers.py make the raw archive, and domains/ has one module per domain: its
documents and its task table."""

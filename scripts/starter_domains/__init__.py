"""The builder of the eight starter domains, run by `python scripts/build_domains.py` (pipeline.py).

spec.py holds the types, reader.py the table reader the golds and the tasks' solutions share, sources.py the
pinned packages, splits.py and writers.py make the raw archive. domains/ has one data file per domain, its table
documents and its task table (<name>.yaml, read by domain_file.py), and one module with the code they name: the
functions that load its data sets, and the files it copies."""

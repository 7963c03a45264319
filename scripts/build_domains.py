"""Build the eight starter domains (collections/<domain>/ and tasks/<domain>.jsonl): the builder is the package
scripts/starter_domains/ (pipeline.py says what it does; `--help` too).

Usage: python scripts/build_domains.py [--root .] [--domain law ...] [--raw DIR] [--debs DIR]
"""

from starter_domains.pipeline import main

if __name__ == "__main__":
    main()

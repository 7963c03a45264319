"""Prints how long the local retrieval back end takes on a MuDABench-sized document set: cutting and indexing it
(once per set and process) and one search, and the index's chunk count.

Run: python bench/retrieval_local.py [DOCUMENTS] [TOKENS_PER_DOCUMENT]
The set is made up: half English and half Chinese reports of repeated financial sentences (MuDABench's sets hold
up to 38 reports; an A-share annual report is about 500k tokens, an ESG report about 70k).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from harness.inputs.retrieval.base import make_retriever
from harness.inputs.retrieval.chunks import ChunkSettings

ENGLISH = "In {year} company {n} reported total assets of {value} dollars and operating costs of {cost}. "
CHINESE = "公司{n}在{year}年的营业总成本为{cost}元，资产总计{value}元。"


def make_set(folder: Path, documents: int, tokens: int) -> None:
    for n in range(documents):
        sentence = ENGLISH if n % 2 else CHINESE
        text = "".join(
            sentence.format(n=n, year=2021 + i % 3, value=1000 + i * 7 + n, cost=500 + i * 3 + n)
            for i in range(tokens // 25)
        )
        (folder / f"doc_{n:02d}.md").write_text(text, encoding="utf-8")


def main() -> None:
    documents = int(sys.argv[1]) if len(sys.argv) > 1 else 38
    tokens = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        make_set(folder, documents, tokens)
        retriever = make_retriever("local", ChunkSettings())
        started = time.perf_counter()
        first = retriever.search(folder, "公司7在2022年的营业总成本", 95)
        indexed = time.perf_counter() - started
        started = time.perf_counter()
        retriever.search(folder, "total assets of company 9 in 2023", 95)
        searched = time.perf_counter() - started
        size = sum(path.stat().st_size for path in folder.iterdir())
    print(f"{documents} documents, {size / 1e6:.1f} MB, {first.source['chunks']} chunks of 800 tokens")
    print(f"cut and index (first search): {indexed:.2f} s; a search of 95 chunks after that: {searched * 1000:.1f} ms")


if __name__ == "__main__":
    main()

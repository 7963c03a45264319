"""Prints how long the reply parsers take on hostile replies of growing size (a linear parser doubles
its time when the size doubles; a quadratic one quadruples it). Run: python bench/hostile_parsing.py [KB ...]
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable

from harness.episode.actions import FormatError, parse_action
from harness.grading.answer import find_answer_tag, has_closed_answer, strip_code_blocks
from harness.models.base import ModelReply

SHAPES: dict[str, Callable[[int], str]] = {
    "bash openers": lambda size: "```bash\n" * (size // 8),
    "backtick run": lambda size: "`" * size,
    "backtick lines": lambda size: ("`" * 40 + "\n") * (size // 41),
    "growing fences": lambda size: "".join("`" * (3 + i % 50) + "bash\n" for i in range(size // 30)),
    "unclosed tags": lambda size: "<answer>" * (size // 8),
    "nested tags": lambda size: "<answer>" * (size // 17) + "</answer>" * (size // 17),
    "tag spaces": lambda size: ("<answer" + " " * 100) * (size // 107),
}


def parse_all(text: str) -> None:
    """Everything the agent loop does with one text reply."""
    prose = strip_code_blocks(text)
    has_closed_answer(prose)
    find_answer_tag(prose)
    with contextlib.suppress(FormatError):
        parse_action(ModelReply(text=text), "text")


def main(sizes_kb: list[int]) -> None:
    for name, make in SHAPES.items():
        figures = []
        for size_kb in sizes_kb:
            text = make(size_kb * 1000)
            began = time.perf_counter()
            parse_all(text)
            figures.append(f"{size_kb} KB {1000 * (time.perf_counter() - began):8.1f} ms")
        print(f"{name:>15}: " + " | ".join(figures))


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [250, 500, 1000])

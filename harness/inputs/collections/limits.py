"""The bounds on converting one document (issue 37: a 1.8 KB spreadsheet took 3.8 GB in 8 seconds on its way
to 100 GB, another wrote 246 MB of Markdown, a 44 KB PDF took over 3 minutes): past one, the document is
skipped with the limit named, and the build goes on."""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.bounded import DIED, MEMORY, TIME, Limits, Stopped

MAX_MEMORY_MB = 2048
"""Per worker process; a 1,000-page report takes a few hundred MB."""
MAX_SECONDS = 600.0
"""Per document; a 1,000-page report takes about a minute."""
MAX_OUTPUT_MB = 100
"""Markdown per document; a 1,000-page report gives about 3 MB."""


@dataclass(frozen=True)
class ConversionLimits:
    memory_mb: int = MAX_MEMORY_MB
    seconds: float = MAX_SECONDS
    output_mb: int = MAX_OUTPUT_MB

    @property
    def process(self) -> Limits:
        return Limits(self.memory_mb, self.seconds)

    @property
    def output_bytes(self) -> int:
        return self.output_mb * 1024 * 1024


def stopped_reason(stopped: Stopped, limits: ConversionLimits) -> str:
    """A conversion's process that went over a limit or kept dying: why its document is skipped."""
    if stopped.limit == MEMORY:
        return f"memory: converting it needs more than {limits.memory_mb} MB (--max-memory)"
    if stopped.limit == TIME:
        return f"time: converting it took longer than {limits.seconds:g} s (--max-time)"
    assert stopped.limit == DIED
    return "the converter's process died (a crash, or out of memory)"

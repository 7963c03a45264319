"""A MuDABench episode's judged fact rows, as Table 3 and Figure 4 read them (mudabench_documents.py gathers them,
mudabench_figures.py draws them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JudgedEpisode:
    """One episode's judged fact rows, with what Table 3 and Figure 4 group them by."""

    label: str
    setting: str
    split: str
    rows: tuple[tuple[str, int, int], ...]
    """Per fact row: its document's kind, its cells covered, its cells."""
    tokens: int
    """The tokens of the task's documents (its set)."""

    @property
    def share(self) -> float | None:
        total = sum(cells for _, _, cells in self.rows)
        return sum(covered for _, covered, _ in self.rows) / total if total else None

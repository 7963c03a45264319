"""Small, exact statistics for accuracy tables: Wilson intervals and McNemar's exact test."""

from __future__ import annotations

import math

Z_95 = 1.959963984540054


def wilson_interval(correct: float, total: int, z: float = Z_95) -> tuple[float, float]:
    """95% Wilson score interval for a proportion; (0, 0) for no trials. Sound at 0% and 100%. CORRECT may be
    fractional (a mean share times the trials)."""
    if total == 0:
        return 0.0, 0.0
    p = correct / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts (binomial, p = 1/2)."""
    discordant = only_first + only_second
    if discordant == 0:
        return 1.0
    tail = sum(math.comb(discordant, i) for i in range(min(only_first, only_second) + 1)) / 2**discordant
    return min(1.0, 2 * tail)

"""Per-model spread over domains, and tiers of models separated by a gap larger than any gap inside them."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

TIER_RULE = (
    "models in order of overall accuracy; a tier boundary is a gap between consecutive models larger than every "
    "gap between consecutive models inside the two tiers it separates; a tier holds two or more models (a lone "
    "model has no gap inside to compare with); of the valid sets of boundaries the one with most tiers is shown"
)
_MAX_MODELS = 16
"""Tiers are found by trying every set of boundaries: 2^15 sets at most."""
_TIE = 1e-9
"""Gaps closer than this are equal (accuracies are ratios computed in floating point)."""


@dataclass(frozen=True)
class Spread:
    """A model's best and worst domain (accuracy as a share)."""

    best_domain: str
    best: float
    worst_domain: str
    worst: float

    @property
    def spread(self) -> float:
        return self.best - self.worst


@dataclass(frozen=True)
class Tiers:
    """Models grouped best first, with the gap below each tier but the last."""

    groups: list[list[str]]
    gaps: list[float]
    """gaps[i]: the accuracy of the last model of tier i minus that of the first of tier i + 1."""


def spread(per_domain: Mapping[str, float]) -> Spread | None:
    """Best minus worst domain; None with fewer than two domains."""
    if len(per_domain) < 2:
        return None
    ordered = sorted(per_domain.items(), key=lambda item: (-item[1], item[0]))
    (best_domain, best), (worst_domain, worst) = ordered[0], ordered[-1]
    return Spread(best_domain, best, worst_domain, worst)


def find_tiers(overall: Mapping[str, float]) -> Tiers | None:
    """The tiers of TIER_RULE; None when no boundary qualifies (or more than _MAX_MODELS models)."""
    order = sorted(overall, key=lambda model: (-overall[model], model))
    if not 4 <= len(order) <= _MAX_MODELS:
        return None
    gaps = [overall[order[i]] - overall[order[i + 1]] for i in range(len(order) - 1)]
    best: tuple[int, float, tuple[int, ...]] | None = None
    for count in range(1, len(gaps) + 1):
        for cuts in itertools.combinations(range(len(gaps)), count):
            if _valid(cuts, gaps):
                score = (count, min(gaps[c] for c in cuts), cuts)
                best = score if best is None or score[:2] > best[:2] else best
    if best is None:
        return None
    cuts = best[2]
    bounds = [0, *(c + 1 for c in cuts), len(order)]
    return Tiers([order[start:end] for start, end in itertools.pairwise(bounds)], [gaps[c] for c in cuts])


def _valid(cuts: tuple[int, ...], gaps: list[float]) -> bool:
    """Each tier two or more models; each boundary's gap above every gap inside its neighbouring tiers."""
    bounds = [-1, *cuts, len(gaps)]
    inside: list[list[float]] = []
    for start, end in itertools.pairwise(bounds):
        if end - start < 2:
            return False
        inside.append(gaps[start + 1 : end])
    return all(gaps[cut] > max(inside[i] + inside[i + 1]) + _TIE for i, cut in enumerate(cuts))

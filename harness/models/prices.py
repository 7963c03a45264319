"""Token prices: a `--prices` file (per model, USD per million tokens), else litellm's bundled map.

A call's cost is computed here from its recorded tokens and the price used, never taken from the provider's
reply, so a run's cost can be recomputed from its trajectories under other prices."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.core.errors import InputError, read_text_input
from harness.core.reply import Usage
from harness.core.yaml_safe import compose_yaml, load_yaml

_PER_MILLION = 1_000_000
_RATE_FIELDS = ("input", "output", "cache_read", "cache_write")
_LONG_CONTEXT = "long_context"
_LITELLM_TIER = re.compile(r"input_cost_per_token_above_(\d+)k_tokens")


@dataclass(frozen=True)
class _Rates:
    """USD per million tokens."""

    input: float
    """Prompt tokens that are neither read from nor written to the provider's cache."""
    output: float
    """Completion tokens, reasoning included."""
    cache_read: float
    """Prompt tokens read from the cache (the file's default: the input price, an upper bound)."""
    cache_write: float
    """Prompt tokens written to the cache (the file's default: the input price)."""


@dataclass(frozen=True)
class Price:
    """A model's price; `long_context` applies to a whole call whose prompt is over `long_context_above` tokens."""

    rates: _Rates
    source: str
    """Where the price came from: the `--prices` file's path, or `litellm` (its bundled map)."""
    long_context_above: int | None = None
    long_context: _Rates | None = None

    def cost(self, usage: Usage) -> float:
        """USD for one call's tokens (cached and cache-written tokens are part of the prompt)."""
        rates = self.rates
        if self.long_context is not None and self.long_context_above is not None:
            rates = self.long_context if usage.input_tokens > self.long_context_above else rates
        plain = max(usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens, 0)
        total = (
            plain * rates.input
            + usage.cached_tokens * rates.cache_read
            + usage.cache_write_tokens * rates.cache_write
            + usage.output_tokens * rates.output
        )
        return total / _PER_MILLION

    def to_dict(self) -> dict[str, Any]:
        """As run.yaml records it (USD per million tokens)."""
        record: dict[str, Any] = {"source": self.source, **asdict(self.rates)}
        if self.long_context is not None:
            record[_LONG_CONTEXT] = {"above": self.long_context_above, **asdict(self.long_context)}
        return record


def load_prices(path: Path) -> dict[str, Price]:
    """A prices file: `MODEL: {input: USD, output: USD, cache_read: USD, cache_write: USD, long_context: {above:
    TOKENS, input: USD, ...}}` per million tokens; MODEL is an alias or a provider string. Errors name the line."""
    text = read_text_input(path, "prices")
    node = compose_yaml(text, path)
    if node is None:
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise InputError(f"{path}:1: prices must be a mapping of model: prices")
    prices = {}
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode) or not key.value:
            raise InputError(f"{_at(path, key)}: a model name must be a string")
        fields = _mapping(path, value, (*_RATE_FIELDS, _LONG_CONTEXT))
        rates = _rates(path, value, fields, "")
        tier = fields.get(_LONG_CONTEXT)
        if tier is None:
            prices[key.value] = Price(rates, str(path))
            continue
        tier_fields = _mapping(path, tier, ("above", *_RATE_FIELDS))
        above = _number(path, tier_fields.get("above"), "long_context.above")
        if above is None or not above.is_integer() or above <= 0:
            raise InputError(f"{_at(path, tier)}: field 'long_context.above': a positive number of prompt tokens")
        prices[key.value] = Price(rates, str(path), int(above), _rates(path, tier, tier_fields, "long_context."))
    return prices


def _at(path: Path, node: yaml.Node) -> str:
    return f"{path}:{node.start_mark.line + 1}"


def _mapping(path: Path, node: yaml.Node, allowed: tuple[str, ...]) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        raise InputError(f"{_at(path, node)}: prices must be a mapping of {', '.join(allowed)}")
    fields = {}
    for key, value in node.value:
        if key.value not in allowed:
            raise InputError(f"{_at(path, key)}: field '{key.value}': unknown (one of {', '.join(allowed)})")
        fields[key.value] = value
    return fields


def _rates(path: Path, node: yaml.Node, fields: dict[str, yaml.Node], prefix: str) -> _Rates:
    values = {name: _number(path, fields.get(name), prefix + name) for name in _RATE_FIELDS}
    plain, output = values["input"], values["output"]
    for name, value in (("input", plain), ("output", output)):
        if value is None:
            raise InputError(f"{_at(path, node)}: field '{prefix}{name}': missing (USD per million tokens)")
    assert plain is not None and output is not None
    cache_read, cache_write = values["cache_read"], values["cache_write"]
    return _Rates(
        plain, output, plain if cache_read is None else cache_read, plain if cache_write is None else cache_write
    )


def _number(path: Path, node: yaml.Node | None, name: str) -> float | None:
    if node is None:
        return None
    value = load_yaml(yaml.serialize(node), path) if isinstance(node, yaml.ScalarNode) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        shown = node.value if isinstance(node, yaml.ScalarNode) else "a collection"
        raise InputError(f"{_at(path, node)}: field '{name}': {shown!r} is not a non-negative number")
    return float(value)


def price_in(names: tuple[str, ...], prices: dict[str, Price]) -> Price | None:
    """The first of a model's names (as given, then its provider string) that the prices file prices."""
    return next((prices[name] for name in names if name in prices), None)


def price_from_litellm(info: dict[str, Any]) -> Price | None:
    """A price from litellm's model info (USD per token there, per million here); None without one."""
    if info.get("input_cost_per_token") is None or info.get("output_cost_per_token") is None:
        return None

    def per_million(key: str, fallback: str) -> float:
        value = info.get(key) or info.get(fallback) or 0.0
        return float(value) * _PER_MILLION

    def rates(suffix: str = "") -> _Rates:
        tier_input = per_million(f"input_cost_per_token{suffix}", "input_cost_per_token")
        cache_read = info.get(f"cache_read_input_token_cost{suffix}") or info.get("cache_read_input_token_cost")
        written = "cache_creation_input_token_cost"
        cache_write = info.get(f"{written}{suffix}") or info.get(written)
        return _Rates(
            input=tier_input,
            output=per_million(f"output_cost_per_token{suffix}", "output_cost_per_token"),
            cache_read=tier_input if cache_read is None else float(cache_read) * _PER_MILLION,
            cache_write=tier_input if cache_write is None else float(cache_write) * _PER_MILLION,
        )

    tiers = sorted(int(match.group(1)) for key in info if (match := _LITELLM_TIER.fullmatch(key)) and info[key])
    if not tiers:
        return Price(rates(), "litellm")
    return Price(rates(), "litellm", tiers[0] * 1000, rates(f"_above_{tiers[0]}k_tokens"))

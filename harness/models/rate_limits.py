"""Rate limits as the providers state them: the budget a reply's headers announce, and the delay a 429 asks for.

- OpenAI (https://platform.openai.com/docs/guides/rate-limits, "Rate limits in headers"): every reply carries
  `x-ratelimit-limit-requests|tokens`, `x-ratelimit-remaining-requests|tokens` and
  `x-ratelimit-reset-requests|tokens`, the time until the budget is whole again as a duration (`6m0s`, `1s`,
  `20ms`).
- Anthropic (https://docs.anthropic.com/en/api/rate-limits, "Response headers"): `anthropic-ratelimit-requests-*`,
  `-tokens-*`, `-input-tokens-*`, `-output-tokens-*` (`-limit`, `-remaining`, and `-reset` as an RFC 3339
  time), and `retry-after` (seconds) on a 429; its buckets refill continuously.
- Gemini (https://ai.google.dev/gemini-api/docs/rate-limits; the 429 RESOURCE_EXHAUSTED of
  https://ai.google.dev/gemini-api/docs/troubleshooting): no budget headers; the 429's body has a
  `google.rpc.RetryInfo` detail whose `retryDelay` is a duration string (`"7s"`).

`provider_delay_s` reads a failed call's delay; `announcement_of` a reply's (or an error's) budget, which
`PacedBudget` turns into a wait before the next call (`models/concurrency.py` holds one per provider gate).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any

MAX_DELAY_S = 60.0
"""The longest a provider's delay or announced reset holds a call: a day's reset is re-read, not waited."""

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_RETRY_DELAY = re.compile(r'"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"')


@dataclass(frozen=True)
class Allowance:
    """One budget as announced: what is left of it, its size, and when it is whole again."""

    remaining: float
    limit: float | None
    reset_in_s: float


@dataclass(frozen=True)
class Announcement:
    """A reply's word on its provider's request and token budgets (None: not announced)."""

    requests: Allowance | None = None
    tokens: Allowance | None = None


def duration_s(text: str) -> float | None:
    """`6m0s`, `1s`, `20ms`, `1h2m3.5s` (OpenAI's reset headers, Gemini's retryDelay) in seconds; None otherwise."""
    text = text.strip()
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _UNIT_S[unit] for number, unit in parts)


def _seconds_until(text: str, now: float) -> float | None:
    """An RFC 3339 time (Anthropic's reset headers) as seconds from NOW (epoch seconds), never negative."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return max(moment.timestamp() - now, 0.0)


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) and number >= 0 else None


def _allowance(headers: Mapping[str, str], remaining: str, limit: str, reset: str, now: float) -> Allowance | None:
    left = _number(headers.get(remaining))
    reset_text = headers.get(reset)
    if left is None or reset_text is None:
        return None
    reset_in = duration_s(reset_text)
    if reset_in is None:
        reset_in = _seconds_until(reset_text, now)
    if reset_in is None:
        return None
    return Allowance(left, _number(headers.get(limit)), min(reset_in, MAX_DELAY_S))


def announcement_from_headers(headers: Mapping[str, str], now: float | None = None) -> Announcement | None:
    """The budgets OpenAI's or Anthropic's headers announce (names lower-case); None when they announce none."""
    now = time.time() if now is None else now
    requests = _allowance(
        headers, "x-ratelimit-remaining-requests", "x-ratelimit-limit-requests", "x-ratelimit-reset-requests", now
    ) or _allowance(
        headers,
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-limit",
        "anthropic-ratelimit-requests-reset",
        now,
    )
    tokens = _allowance(
        headers, "x-ratelimit-remaining-tokens", "x-ratelimit-limit-tokens", "x-ratelimit-reset-tokens", now
    )
    for kind in ("tokens", "input-tokens", "output-tokens"):
        tokens = tokens or _allowance(
            headers,
            f"anthropic-ratelimit-{kind}-remaining",
            f"anthropic-ratelimit-{kind}-limit",
            f"anthropic-ratelimit-{kind}-reset",
            now,
        )
    return Announcement(requests, tokens) if requests or tokens else None


def _headers_of(reply_or_error: Any) -> dict[str, str]:
    """The HTTP headers litellm kept of a reply (`_hidden_params`: `headers`, or `additional_headers` with their
    `llm_provider-` prefix) or of a failed call (`response.headers`, `litellm_response_headers`, `headers`),
    names lower-case; {} when it kept none."""
    hidden = getattr(reply_or_error, "_hidden_params", None)
    sources: list[Any] = []
    if isinstance(hidden, Mapping):
        sources.append(hidden.get("headers"))
        extra = hidden.get("additional_headers")
        if isinstance(extra, Mapping):
            sources.append({str(k).removeprefix("llm_provider-"): v for k, v in extra.items()})
    sources += [
        getattr(getattr(reply_or_error, "response", None), "headers", None),
        getattr(reply_or_error, "litellm_response_headers", None),
        getattr(reply_or_error, "headers", None),
    ]
    found: dict[str, str] = {}
    for source in sources:
        if source is None or not hasattr(source, "items"):
            continue
        for name, value in source.items():
            found.setdefault(str(name).lower(), str(value))
    return found


def announcement_of(reply_or_error: Any) -> Announcement | None:
    return announcement_from_headers(_headers_of(reply_or_error))


def provider_delay_s(error: BaseException) -> float | None:
    """The delay a failed call's provider asked for, at most `MAX_DELAY_S`: `retry-after-ms` or `retry-after`
    (seconds or an HTTP date), else Gemini's `RetryInfo.retryDelay` in the error body; None when none."""
    headers = _headers_of(error)
    seconds = _number(headers.get("retry-after-ms"))
    if seconds is not None:
        seconds /= 1000
    else:
        seconds = _number(headers.get("retry-after"))
    if seconds is None and headers.get("retry-after"):
        try:
            seconds = max(parsedate_to_datetime(headers["retry-after"]).timestamp() - time.time(), 0.0)
        except (TypeError, ValueError):
            seconds = None
    if seconds is None:
        match = _RETRY_DELAY.search(_body_of(error)) or _RETRY_DELAY.search(str(error))
        seconds = float(match.group(1)) if match else None
    return None if seconds is None else min(seconds, MAX_DELAY_S)


def _body_of(error: BaseException) -> str:
    """The failed call's HTTP body as text, "" when it kept none (or a streamed one was never read)."""
    try:
        body = getattr(getattr(error, "response", None), "text", None)
    except Exception:  # httpx's ResponseNotRead, a decoding error: no body to read
        return ""
    return body if isinstance(body, str) else ""

"""An OpenAI-compatible loopback server that announces and enforces requests and tokens per minute as the
providers document them (tests/helpers/openai_server.py answers; this adds the budgets).

- OpenAI, https://platform.openai.com/docs/guides/rate-limits: limits are requests (RPM) and tokens (TPM) per
  minute; a request's tokens are estimated from its characters (about four a token) and its `max_tokens`;
  every reply carries `x-ratelimit-limit-requests|tokens`, `x-ratelimit-remaining-requests|tokens` and
  `x-ratelimit-reset-requests|tokens` (the time until the budget is whole again: `1s`, `6m0s`, `20ms`); a
  request over a budget is a 429 whose error has `code: rate_limit_exceeded` and `type` `requests` or `tokens`.
- Anthropic, https://docs.anthropic.com/en/api/rate-limits (`style="anthropic"`): the same budgets as token
  buckets, "continuously replenished up to your maximum limit", announced as `anthropic-ratelimit-requests-*`
  and `anthropic-ratelimit-tokens-*` (`-limit`, `-remaining`, `-reset` as an RFC 3339 time); a 429 carries
  `retry-after` in seconds and a `rate_limit_error`. (Here on the OpenAI-compatible wire: the headers are what
  is checked; Anthropic's Messages wire is its own fake's.)

Both budgets are buckets of the per-minute size refilled evenly over `minute_s` (a test's shortened minute: the
headers speak in its seconds). `style=None` enforces the budgets but announces nothing but a 429's
`retry-after`. `log` has each request's arrival (monotonic seconds) and status, to measure waits by.
"""

from __future__ import annotations

import json
import math
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

from tests.helpers.openai_server import ScriptedOpenAIServer, Step, fault

CHARS_PER_TOKEN = 4
COMPLETION_TOKENS = 30
"""What every reply is charged (and reports) for its completion."""


def openai_duration(seconds: float) -> str:
    """OpenAI's reset format: `20ms`, `1.5s`, `6m0s`."""
    if seconds < 1:
        return f"{math.ceil(seconds * 1000)}ms"
    if seconds < 60:
        return f"{round(seconds, 3):g}s"
    return f"{int(seconds // 60)}m{round(seconds % 60, 3):g}s"


class RateLimitedServer(ScriptedOpenAIServer):
    def __init__(self, rpm: int, tpm: int, minute_s: float = 60.0, style: str | None = "openai") -> None:
        super().__init__()
        self.rpm, self.tpm, self.minute_s, self.style = rpm, tpm, minute_s, style
        self._requests_left, self._tokens_left = float(rpm), float(tpm)
        self._filled_at = time.monotonic()
        self._budget_lock = threading.Lock()
        self.log: list[tuple[float, int]] = []
        """(arrival, status) of every request."""
        self.tokens_charged = 0

    def _refill(self, now: float) -> None:
        elapsed, self._filled_at = now - self._filled_at, now
        self._requests_left = min(float(self.rpm), self._requests_left + self.rpm * elapsed / self.minute_s)
        self._tokens_left = min(float(self.tpm), self._tokens_left + self.tpm * elapsed / self.minute_s)

    def _until(self, left: float, need: float, per_minute: int) -> float:
        return max(need - left, 0.0) * self.minute_s / per_minute

    def _step_for(self, request: dict[str, Any], authorization: str, path: str) -> Step:
        prompt = len(json.dumps(request.get("messages") or request.get("input") or "")) // CHARS_PER_TOKEN
        cost = prompt + int(request.get("max_tokens") or COMPLETION_TOKENS)
        with self._budget_lock:
            now = time.monotonic()
            self._refill(now)
            if self._requests_left < 1 or self._tokens_left < cost:
                self.log.append((now, 429))
                kind = "requests" if self._requests_left < 1 else "tokens"
                requests_wait = self._until(self._requests_left, 1, self.rpm)
                return self._refusal(kind, max(requests_wait, self._until(self._tokens_left, cost, self.tpm)))
            self._requests_left -= 1
            self._tokens_left -= cost
            self.tokens_charged += cost
            self.log.append((now, 200))
            announced = self._announced()
        step = super()._step_for(request, authorization, path)
        step.headers = {**step.headers, **announced}
        step.usage = {**step.usage, "prompt_tokens": prompt, "completion_tokens": cost - prompt}
        return step

    def _announced(self) -> dict[str, str]:
        requests_reset = self._until(self._requests_left, self.rpm, self.rpm)
        tokens_reset = self._until(self._tokens_left, self.tpm, self.tpm)
        if self.style == "openai":
            return {
                "x-ratelimit-limit-requests": str(self.rpm),
                "x-ratelimit-limit-tokens": str(self.tpm),
                "x-ratelimit-remaining-requests": str(int(self._requests_left)),
                "x-ratelimit-remaining-tokens": str(int(self._tokens_left)),
                "x-ratelimit-reset-requests": openai_duration(requests_reset),
                "x-ratelimit-reset-tokens": openai_duration(tokens_reset),
            }
        if self.style == "anthropic":
            at = datetime.now(timezone.utc)
            return {
                "anthropic-ratelimit-requests-limit": str(self.rpm),
                "anthropic-ratelimit-requests-remaining": str(int(self._requests_left)),
                "anthropic-ratelimit-requests-reset": (at + timedelta(seconds=requests_reset)).isoformat(),
                "anthropic-ratelimit-tokens-limit": str(self.tpm),
                "anthropic-ratelimit-tokens-remaining": str(int(self._tokens_left)),
                "anthropic-ratelimit-tokens-reset": (at + timedelta(seconds=tokens_reset)).isoformat(),
            }
        return {}

    def _refusal(self, kind: str, wait_s: float) -> Step:
        """The provider's 429 for a request over its KIND budget, with `retry-after` (whole seconds, rounded up)."""
        limit = self.rpm if kind == "requests" else self.tpm
        if self.style == "anthropic":
            message = f"This request would exceed the rate limit for your organization of {limit} {kind} per minute."
            body: dict[str, Any] = {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
        else:
            message = f"Rate limit reached on {kind} per min: Limit {limit}. Please try again in {wait_s:.3f}s."
            body = {"error": {"message": message, "type": kind, "param": None, "code": "rate_limit_exceeded"}}
        refused = fault(429, message, {"retry-after": str(max(math.ceil(wait_s), 1)), **self._announced()})
        refused.error_body = body
        return refused

    def refused_share(self) -> float:
        return sum(status == 429 for _, status in self.log) / max(len(self.log), 1)

"""The episode's ledger of turns, wall clock and context tokens; says which limit ended it."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator

from harness.core.messages import Message
from harness.core.reply import Attempt, Usage
from harness.core.status import EpisodeFinished, Status
from harness.models.base import RetryTime, estimate_tokens
from harness.models.image_tokens import split_images
from harness.records.episode_row import Spend

_TokenCounter = Callable[[list[Message]], int]

_FRAMING_TOKENS = 8
"""More than any tokenizer adds around one message (the role's and the reply's markers)."""


def most_tokens(messages: list[Message]) -> int | None:
    """An upper bound on the tokens of MESSAGES under any tokenizer, without one: a token stands for at least one
    byte of text, and the messages' JSON holds every byte of their text. None when a message holds an image (it
    is counted by its provider's rule)."""
    text_only, sizes = split_images(messages)
    if sizes:
        return None
    text = json.dumps(text_only, ensure_ascii=False).encode()
    return len(text) + _FRAMING_TOKENS * (len(messages) + 1)


class Stopwatch:
    """The agent's own time: starts when the sandbox is up; paused while the episode waits for our throttles,
    and without the provider's failed attempts and backoff waits (known only once a call returns: `exclude`)."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._paused_s = 0.0
        self._paused_since: float | None = None

    @property
    def elapsed_s(self) -> float:
        now = time.monotonic()
        pausing = now - self._paused_since if self._paused_since is not None else 0.0
        return now - self._started - self._paused_s - pausing

    def exclude(self, seconds: float) -> None:
        """Take time that has passed off the agent's clock."""
        self._paused_s += max(seconds, 0.0)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        self._paused_since = time.monotonic()
        try:
            yield
        finally:
            self._paused_s += time.monotonic() - self._paused_since
            self._paused_since = None


class Budget:
    def __init__(
        self,
        max_turns: int,
        time_limit_s: float,
        context_window: int | None,
        output_reserve: int,
        cancel: threading.Event | None = None,
        count_tokens: _TokenCounter | None = None,
        clock: Stopwatch | None = None,
        cost_limit_usd: float | None = None,
    ):
        self._count_tokens = count_tokens or estimate_tokens
        self.clock = clock or Stopwatch()
        self._cancel = cancel or threading.Event()
        self.max_turns = max_turns
        self.time_limit_s = time_limit_s
        self.context_window = context_window
        self.output_reserve = output_reserve
        self.cost_limit_usd = cost_limit_usd
        """The episode's spend at which its next model call is refused; None: no cap."""
        self.turns = 0
        self._counted_tokens = 0
        self._counted_messages = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self.reasoning_tokens = 0
        self.cache_write_tokens = 0
        self.cost_usd: float | None = None
        """Sum of the known per-call costs; None while no call had a known price."""
        self.retry_wait_s = 0.0
        self.failed_attempts_s = 0.0
        self.provider_queue_s = 0.0
        """Waits for room under the provider's in-flight limit (`models/concurrency.py`)."""
        self.model_ids: dict[str, int] = {}
        """Calls per model id the provider returned."""

    @property
    def elapsed_s(self) -> float:
        return self.clock.elapsed_s

    @property
    def seconds_left(self) -> float:
        return max(self.time_limit_s - self.elapsed_s, 0.0)

    @property
    def turns_left(self) -> int:
        return max(self.max_turns - self.turns, 0)

    def spend(self) -> Spend:
        """What the agent used, as its row records it."""
        return Spend(
            turns=self.turns,
            duration_s=round(self.elapsed_s, 3),
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cached_tokens=self.cached_tokens,
            reasoning_tokens=self.reasoning_tokens,
            cost_usd=self.cost_usd,
            cache_write_tokens=self.cache_write_tokens,
            retry_wait_s=round(self.retry_wait_s, 3),
            failed_attempts_s=round(self.failed_attempts_s, 3),
            model_ids=dict(self.model_ids),
        )

    def check_before_call(self, messages: list[Message]) -> None:
        """Raise `EpisodeFinished` when the next model call would break a budget (or the run was cancelled)."""
        self.check_cancelled()
        if self.turns >= self.max_turns:
            raise EpisodeFinished(Status.TURN_LIMIT, detail=f"{self.turns} turns used")
        if self.seconds_left <= 0:
            raise EpisodeFinished(Status.TIME_LIMIT, detail=f"{self.elapsed_s:.1f} s elapsed")
        if self.cost_limit_usd is not None and (self.cost_usd or 0.0) >= self.cost_limit_usd:
            raise EpisodeFinished(
                Status.COST_LIMIT, detail=f"{self.cost_usd or 0.0:.6g} USD spent, cap {self.cost_limit_usd:g}"
            )
        if self.context_window is not None and not self._surely_fits(messages):
            needed = self.estimate_prompt_tokens(messages) + self.output_reserve
            if needed > self.context_window:
                raise EpisodeFinished(
                    Status.CONTEXT_LIMIT,
                    detail=f"prompt ~{needed - self.output_reserve} + reserve {self.output_reserve} "
                    f"tokens > window {self.context_window}",
                )

    def record_call(
        self, messages: list[Message], usage: Usage, cost_usd: float | None, model_id: str | None = None
    ) -> None:
        """Count a model call; the reply's usage makes the token count exact up to these messages."""
        self.turns += 1
        if model_id is not None:
            self.model_ids[model_id] = self.model_ids.get(model_id, 0) + 1
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached_tokens += usage.cached_tokens
        self.reasoning_tokens += usage.reasoning_tokens
        self.cache_write_tokens += usage.cache_write_tokens
        if cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost_usd
        if usage.input_tokens:
            self._counted_tokens = usage.input_tokens + usage.output_tokens
            self._counted_messages = len(messages) + 1  # the reply is appended next

    def record_retries(self, attempts: list[Attempt], queued_s: float = 0.0) -> None:
        """A call's failed attempts and backoff waits are the provider's time, and its waits for the provider's
        in-flight limit ours: both off the agent's clock."""
        self.provider_queue_s += queued_s
        self.clock.exclude(queued_s)
        spent = RetryTime.of(attempts)
        self.retry_wait_s += spent.wait_s
        self.failed_attempts_s += spent.failed_s
        self.clock.exclude(spent.wait_s + spent.failed_s)

    def _surely_fits(self, messages: list[Message]) -> bool:
        """Whether the prompt fits even at one token per byte: then no tokenizer is loaded or run (a first call
        does not wait for one, and early turns of a large window are not counted twice)."""
        assert self.context_window is not None
        uncounted = most_tokens(messages[self._counted_messages :])
        return uncounted is not None and self._counted_tokens + uncounted + self.output_reserve <= self.context_window

    def estimate_prompt_tokens(self, messages: list[Message]) -> int:
        """Exact up to the last reply (its reported usage), counted or estimated for what came after."""
        uncounted = messages[self._counted_messages :]
        return self._counted_tokens + (self._count_tokens(uncounted) if uncounted else 0)

    def check_cancelled(self) -> None:
        if self._cancel.is_set():
            raise EpisodeFinished(Status.CANCELLED, detail="the run was interrupted")

    def command_timeout(self, cap_s: float) -> float:
        return min(cap_s, self.seconds_left)

    def out_of_time(self) -> bool:
        return self.seconds_left <= 0

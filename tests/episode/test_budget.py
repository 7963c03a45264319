"""The context check before a call: the tokenizer runs only when the prompt might not fit."""

from __future__ import annotations

from typing import Any

import pytest

from harness.core.images import check_image, image_part
from harness.core.status import EpisodeFinished, Status
from harness.episode.budget import Budget, most_tokens
from tests.helpers.images import png


class CountingCounter:
    def __init__(self, tokens: int) -> None:
        self.tokens = tokens
        self.calls = 0

    def __call__(self, messages: list[dict[str, Any]]) -> int:
        self.calls += 1
        return self.tokens


def test_a_prompt_that_fits_at_a_token_per_byte_is_not_counted():
    counter = CountingCounter(10**9)  # would end the episode, were it asked
    Budget(10, 60, 10_000, 1_000, count_tokens=counter).check_before_call([{"role": "user", "content": "x" * 500}])
    assert counter.calls == 0


def test_a_prompt_that_might_not_fit_is_counted_and_refused_by_the_count():
    counter = CountingCounter(9_500)
    with pytest.raises(EpisodeFinished) as ended:
        Budget(10, 60, 10_000, 1_000, count_tokens=counter).check_before_call(
            [{"role": "user", "content": "x" * 9_000}]
        )
    assert (ended.value.status, counter.calls) == (Status.CONTEXT_LIMIT, 1)
    assert "prompt ~9500" in (ended.value.detail or "")


def test_the_bound_counts_from_the_last_reported_usage():
    """After a reply, the provider's count stands for the messages up to it; only what came after is bounded."""
    from harness.core.reply import Usage

    counter = CountingCounter(1)
    budget = Budget(10, 60, 10_000, 1_000, count_tokens=counter)
    messages = [{"role": "user", "content": "x" * 100}]
    budget.record_call(messages, Usage(input_tokens=8_900, output_tokens=50), None)
    messages += [{"role": "assistant", "content": "y"}, {"role": "user", "content": "z" * 10}]
    budget.check_before_call(messages)  # 8,950 counted + a short bound over 9,000 of room: counted
    assert counter.calls == 1


def test_a_message_with_an_image_is_always_counted():
    """An image is counted by its provider's rule, never bounded by its bytes."""
    part = image_part(check_image(png(64, 48)))
    counter = CountingCounter(100)
    messages = [{"role": "user", "content": [{"type": "text", "text": "look"}, part]}]
    assert most_tokens(messages) is None
    Budget(10, 60, 10**9, 1_000, count_tokens=counter).check_before_call(messages)
    assert counter.calls == 1

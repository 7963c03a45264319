"""Rate limits as the providers state them: calls paced by the budgets announced in the replies' headers, and
a 429's delay (retry-after, Gemini's retryDelay) waited, over real HTTP to tests/helpers/providers/rate_limited.py."""

from __future__ import annotations

import threading
import uuid

import pytest

from harness.models.concurrency import gate_key, local_gate
from harness.models.litellm_model import LiteLLMModel, ProviderSettings
from harness.models.rate_limits import announcement_from_headers, duration_s, provider_delay_s
from tests.helpers.openai_server import fault, reply
from tests.helpers.providers.rate_limited import RateLimitedServer

pytestmark = pytest.mark.usefixtures("openai_key")

QUESTION = [{"role": "user", "content": "How many units?"}]


@pytest.fixture
def limited():
    servers: list[RateLimitedServer] = []

    def start(**options) -> RateLimitedServer:
        server = RateLimitedServer(**options)
        server.respond = lambda request: reply("<answer>42</answer>")
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def model_for(server: RateLimitedServer, max_in_flight: int | None, max_retries: int = 0) -> LiteLLMModel:
    """A model of its own provider key (a unique model name: gates are per provider and endpoint, per process)."""
    name = f"openai/test-{uuid.uuid4().hex[:8]}"
    settings = ProviderSettings(name, api_base=server.url, max_in_flight=max_in_flight, max_retries=max_retries)
    return LiteLLMModel(settings, context_window=None)


def burst(model: LiteLLMModel, threads: int, calls_each: int) -> list[str]:
    """THREADS callers, each making CALLS_EACH calls one after another; what each call ended as."""
    outcomes: list[str] = []

    def caller() -> None:
        for _ in range(calls_each):
            try:
                model.query(QUESTION, timeout_s=60)
                outcomes.append("ok")
            except Exception as error:  # a refused call, once retries are off
                outcomes.append(type(error).__name__)

    workers = [threading.Thread(target=caller) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return outcomes


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_calls_paced_by_the_announced_budget_draw_no_429_where_unannounced_ones_do(limited, style):
    """An 8 s minute: Anthropic's reset is a time of day, read when the reply arrives, so a reply's own latency
    shortens it; in a real minute that is nothing, in a test's short one it must stay small."""
    paced_server = limited(rpm=4, tpm=100_000, minute_s=8.0, style=style)
    paced = burst(model_for(paced_server, max_in_flight=3), threads=3, calls_each=3)
    blind_server = limited(rpm=4, tpm=100_000, minute_s=8.0, style=None)
    blind = burst(model_for(blind_server, max_in_flight=3), threads=3, calls_each=3)
    assert paced == ["ok"] * 9
    assert [status for _, status in paced_server.log].count(429) == 0
    assert [status for _, status in blind_server.log].count(429) > 0  # the same calls, the budget unannounced
    assert "RateLimitError" in " ".join(blind) or "ModelError" in " ".join(blind)


def test_a_token_budget_paces_calls_too(limited):
    """Each call costs 42 tokens here; 180 tokens a (2 s) minute hold the first four at once, the requests budget
    many more."""
    server = limited(rpm=1000, tpm=180, minute_s=2.0)
    # one retry: a paced call's pooled connection can meet the server closing it (twice in CI a call failed with no
    # 429 in sight); a 429 drawn is still seen below, in the server's own log
    outcomes = burst(model_for(server, max_in_flight=4, max_retries=1), threads=4, calls_each=3)
    timeline = [(round(at - server.log[0][0], 3), status) for at, status in server.log]  # on a failure: when each came
    assert outcomes == ["ok"] * 12, timeline
    assert [status for _, status in server.log].count(429) == 0, timeline


def test_a_429s_retry_after_is_waited_before_the_next_attempt(limited):
    server = limited(rpm=1, tpm=100_000, minute_s=3.0, style=None)
    model = model_for(server, max_in_flight=None, max_retries=3)
    model.query(QUESTION, timeout_s=60)  # the budget's one request
    answer = model.query(QUESTION, timeout_s=60)  # refused with retry-after: 3, then answered
    (refused_at, refused), (answered_at, answered) = server.log[1], server.log[2]
    assert (refused, answered) == (429, 200)
    assert answer.attempts[0].wait_s == 3.0
    assert answered_at - refused_at >= 3.0


def test_geminis_retry_delay_in_the_429_body_is_waited(openai_server):
    """Gemini's 429 (RESOURCE_EXHAUSTED) names its delay only in the body, as google.rpc.RetryInfo."""
    gemini_body = {
        "error": {
            "code": 429,
            "message": "Resource has been exhausted (e.g. check quota).",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}],
        }
    }
    refused = fault(429, "")
    refused.error_body = gemini_body
    openai_server.push(refused, reply("<answer>42</answer>"))
    settings = ProviderSettings("openai/test-model", api_base=openai_server.url, max_retries=2)
    answer = LiteLLMModel(settings, context_window=None).query(QUESTION, timeout_s=60)
    assert answer.attempts[0].status == 429 and answer.attempts[0].wait_s == 2.0


def test_the_gate_learns_the_budget_announced_on_every_reply(limited):
    server = limited(rpm=50, tpm=100_000, minute_s=60.0)
    model = model_for(server, max_in_flight=2)
    model.query(QUESTION, timeout_s=60)
    gate = local_gate(gate_key(model.name, server.url), 2)
    assert gate._pacing._requests is not None and gate._pacing._requests.allowance.remaining == 49


@pytest.mark.parametrize(
    ("text", "seconds"), [("6m0s", 360.0), ("1s", 1.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("7s", 7.0)]
)
def test_provider_durations_read_as_seconds(text, seconds):
    assert duration_s(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "5", "-1s", "1s2"])
def test_what_is_not_a_duration_reads_as_none(text):
    assert duration_s(text) is None


def test_anthropics_rfc_3339_reset_is_seconds_from_now():
    headers = {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "3",
        "anthropic-ratelimit-requests-reset": "2026-12-01T12:00:10Z",
        "anthropic-ratelimit-input-tokens-remaining": "900",
        "anthropic-ratelimit-input-tokens-reset": "2026-12-01T12:00:04+00:00",
    }
    now = 1796126400.0  # 2026-12-01T12:00:00Z
    announced = announcement_from_headers(headers, now)
    assert announced is not None and announced.requests is not None and announced.tokens is not None
    assert (announced.requests.remaining, announced.requests.limit, announced.requests.reset_in_s) == (3, 50, 10)
    assert (announced.tokens.remaining, announced.tokens.limit, announced.tokens.reset_in_s) == (900, None, 4)


@pytest.mark.parametrize("value", ["nan", "inf", "-5", "86400", "Wed, 21 Oct 2015 07:28:00 GMT"])
def test_a_providers_absurd_delay_never_holds_a_call_past_our_longest_wait(value):
    refused = Exception("429")
    refused.headers = {"retry-after": value}  # type: ignore[attr-defined]
    seconds = provider_delay_s(refused)
    assert seconds is None or 0.0 <= seconds <= 60.0


@pytest.mark.parametrize(
    ("remaining", "reset", "expected"),
    [("nan", "1s", None), ("-3", "1s", None), ("5", "soon", None), ("5", "99999h", 60.0), ("5", "250ms", 0.25)],
)
def test_a_providers_absurd_announcement_is_ignored_or_bounded_by_our_clock(remaining, reset, expected):
    headers = {"x-ratelimit-remaining-requests": remaining, "x-ratelimit-reset-requests": reset}
    announced = announcement_from_headers(headers)
    if expected is None:
        assert announced is None
    else:
        assert announced is not None and announced.requests is not None
        assert announced.requests.reset_in_s == pytest.approx(expected)

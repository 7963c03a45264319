"""Budget used and requests refused against providers that announce and enforce their rate limits.

Run: python bench/rate_limit_pacing.py [SECONDS]   (default 24: each configuration's run)
Callers (threads) make model calls one after another through our provider path (litellm, the provider's gate,
the retries) to tests/helpers/providers/rate_limited.py, which enforces requests and tokens per minute as OpenAI and
Anthropic document them and announces them in every reply's headers. The minute is shortened to 8 s, so each
run spans several. Budget used: the binding budget's share the calls took of what the server allowed over the
run (its full bucket at the start and its refill since); refused: the share of requests answered 429.
Targets: >= 90% of the budget used, <= 2% of requests refused.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.models.litellm_model import LiteLLMModel, ProviderSettings
from tests.helpers.openai_server import reply
from tests.helpers.providers.rate_limited import RateLimitedServer

MINUTE_S = 8.0
CONFIGS = [
    # (style, rpm, tpm, callers): the binding budget is requests, then tokens
    ("openai", 60, 1_000_000, 8),
    ("anthropic", 60, 1_000_000, 8),
    ("openai", 10_000, 4_000, 8),
    ("openai", 120, 1_000_000, 16),
]


def run(style: str, rpm: int, tpm: int, callers: int, seconds: float) -> tuple[float, float, int]:
    server = RateLimitedServer(rpm=rpm, tpm=tpm, minute_s=MINUTE_S, style=style)
    server.respond = lambda request: reply("<answer>42</answer>")
    server.start()
    settings = ProviderSettings(
        f"openai/bench-{uuid.uuid4().hex[:8]}", api_base=server.url, max_in_flight=callers, max_retries=5
    )
    model = LiteLLMModel(settings, context_window=None)
    question = [{"role": "user", "content": "How many units in 2020 and 2021 together?"}]
    started = time.monotonic()
    deadline = started + seconds

    def caller() -> None:
        while time.monotonic() < deadline:
            model.query(question, timeout_s=120)

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = max(t for t, _ in server.log) - started
    server.stop()
    answered = sum(status == 200 for _, status in server.log)
    allowed_requests = rpm + rpm * elapsed / MINUTE_S
    allowed_tokens = tpm + tpm * elapsed / MINUTE_S
    used = max(answered / allowed_requests, server.tokens_charged / allowed_tokens)
    return used, server.refused_share(), len(server.log)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 24.0
    print(f"each run {seconds:.0f} s, minute {MINUTE_S:.0f} s")
    print("| headers | RPM | TPM | callers | requests | budget used | refused |")
    print("|---|---|---|---|---|---|---|")
    for style, rpm, tpm, callers in CONFIGS:
        used, refused, requests = run(style, rpm, tpm, callers, seconds)
        print(f"| {style} | {rpm} | {tpm} | {callers} | {requests} | {100 * used:.1f}% | {100 * refused:.2f}% |")


if __name__ == "__main__":
    main()

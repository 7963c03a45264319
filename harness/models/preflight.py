"""Before a run writes anything, its endpoints answer (the provider litellm resolves is checked in
`litellm_model.provider_of`): a wrong `--api-base` is one line and exit 2, not minutes of retries and a folder
of failed episodes."""

from __future__ import annotations

import httpx

from harness.core.errors import InputError

_CONNECT_TIMEOUT_S = 10.0
"""How long the endpoint has to take the connection: past it, nothing is there (or nothing reachable)."""
_ANSWER_TIMEOUT_S = 10.0
"""How long a server that took the connection has to answer its model list (any HTTP answer will do) before the
run starts anyway: it is there, but busy."""


def check_endpoint(api_base: str, flag: str) -> str | None:
    """One cheap request, the OpenAI-compatible model list (GET {api_base}/models): any HTTP answer, even a
    refusal, says the server is there; a connection that fails or is not taken is an `InputError` naming the
    endpoint. A server that takes the connection and does not answer is there but busy (llama.cpp's, still
    generating a reply a stopped run abandoned, answers nothing else until it is done): the run starts, its
    calls wait their turn, and the returned note says so; None when the server answered."""
    url = api_base.rstrip("/") + "/models"
    try:
        httpx.get(url, timeout=httpx.Timeout(_ANSWER_TIMEOUT_S, connect=_CONNECT_TIMEOUT_S))
    except httpx.ConnectTimeout:
        raise InputError(
            f"{flag} {api_base}: the connection was not taken within {_CONNECT_TIMEOUT_S:g} s (GET {url}); "
            "is the server running, and is this its address?"
        ) from None
    except httpx.TimeoutException:
        return (
            f"{flag} {api_base}: the server took the connection but has not answered GET {url} within "
            f"{_ANSWER_TIMEOUT_S:g} s: it is busy (still generating a reply a stopped run left it?); the run's "
            "calls wait for it"
        )
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(f"{flag} {api_base}: cannot connect ({reason}); is the server running?") from None
    return None

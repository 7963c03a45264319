"""Before a run writes anything, its endpoints answer (the provider litellm resolves is checked in
`litellm_model.provider_of`): a wrong `--api-base` is one line and exit 2, not minutes of retries and a folder
of failed episodes."""

from __future__ import annotations

import httpx

from harness.core.errors import InputError

_PREFLIGHT_TIMEOUT_S = 10.0
"""How long the endpoint has to answer its model list (any HTTP answer will do: it is there)."""


def check_endpoint(api_base: str, flag: str) -> None:
    """One cheap request, the OpenAI-compatible model list (GET {api_base}/models): any HTTP answer, even a
    refusal, says the server is there; a connection that fails or hangs is an `InputError` naming the endpoint."""
    url = api_base.rstrip("/") + "/models"
    try:
        httpx.get(url, timeout=_PREFLIGHT_TIMEOUT_S)
    except httpx.TimeoutException:
        raise InputError(f"{flag} {api_base}: no answer within {_PREFLIGHT_TIMEOUT_S:g} s (GET {url})") from None
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(f"{flag} {api_base}: cannot connect ({reason}); is the server running?") from None

"""The E2B service's answers as our errors: the API key, the SDK's exception classes, one line for each."""

from __future__ import annotations

import os
from typing import Any

from harness.sandboxes.base import SandboxError

_API_KEY_VARIABLE = "E2B_API_KEY"


def require_api_key() -> str:
    key = os.environ.get(_API_KEY_VARIABLE)
    if not key:
        raise SandboxError(f"--sandbox e2b needs an E2B API key: set {_API_KEY_VARIABLE}")
    return key


def sdk_errors(sdk: Any) -> tuple[type[BaseException], ...]:
    """Every error class the SDK raises for the service's answers (some do not derive from SandboxException),
    and httpx's transport errors, which the SDK's API calls let through unwrapped (an API timeout, a refused
    connection: e2b `retry.py` raises `httpx.TimeoutException` itself)."""
    import httpx

    names = ("SandboxException", "AuthenticationException", "BuildException", "ServiceBusyException")
    return (*(getattr(sdk, name) for name in names if hasattr(sdk, name)), httpx.TransportError)


def explain(sdk: Any, error: BaseException) -> str:
    """One line for an SDK error, with the fix where there is one."""
    text = " ".join(str(error).split()) or type(error).__name__
    if isinstance(error, sdk.AuthenticationException):
        return f"E2B refused the API key ({text}); check {_API_KEY_VARIABLE}"
    if isinstance(error, getattr(sdk, "RateLimitException", ())):
        return f"E2B rate limit ({text}); lower --max-sandboxes or wait"
    return f"{type(error).__name__}: {text}"

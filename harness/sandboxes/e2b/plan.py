"""An E2B plan's limits and what the runner does about each: the sandbox lifetime, sandboxes at once,
and sandbox creations per second (paced by `sandboxes/pacing.py`, so a run at its cap never depends on the
SDK's retries)."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

from harness.sandboxes.base import SandboxError

_PLAN_VARIABLE = "E2B_PLAN"
LIFETIME_MARGIN_S = 120
"""A sandbox lives this much longer than the episode's time limit, never hours more."""
CREATE_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0)
"""The longest waits between sandbox creations refused with 429 (each drawn at random up to it, so workers
refused together do not retry together): at most about 30 s of the episode's start-up, before its agent
clock starts."""


@dataclass(frozen=True)
class Plan:
    """An E2B plan's limits (https://e2b.dev/pricing): the longest sandbox lifetime, concurrent sandboxes."""

    name: str
    max_lifetime_s: int
    max_sandboxes: int
    creations_per_s: float
    """Sandbox creations the API accepts per second (its rate limiter, e2b-dev/infra
    `api/internal/middleware/ratelimit`, a token bucket per team and route); more are refused with 429."""


PLANS = {"hobby": Plan("hobby", 3600, 20, 1.0), "pro": Plan("pro", 24 * 3600, 100, 5.0)}
"""Hobby: 1-hour sandboxes, 20 at once, 1 creation a second; Pro: 24 hours, 100 at once, 5 a second. The
API refuses a longer `timeout` with 400 and a sandbox beyond the caps with 429."""


def current_plan() -> Plan:
    """The account's plan from E2B_PLAN (default hobby, the tighter one); raises `SandboxError`."""
    name = os.environ.get(_PLAN_VARIABLE, "hobby").strip().lower()
    if name not in PLANS:
        raise SandboxError(f"{_PLAN_VARIABLE}={name!r}: expected one of {', '.join(PLANS)}")
    return PLANS[name]


def sandbox_lifetime(time_limit_s: float, plan: Plan) -> int:
    """The time limit plus a margin, capped at the plan's longest sandbox (the API refuses more with 400);
    raises `SandboxError` saying what to change when the time limit itself does not fit."""
    if time_limit_s > plan.max_lifetime_s:
        raise SandboxError(
            f"--time-limit {time_limit_s:g}: E2B's {plan.name} plan keeps a sandbox at most {plan.max_lifetime_s} s; "
            f"use --time-limit {plan.max_lifetime_s - LIFETIME_MARGIN_S} or less{_other_plan(plan)}"
        )
    return int(min(time_limit_s + LIFETIME_MARGIN_S, plan.max_lifetime_s))


def lifetime_warning(time_limit_s: float, plan: Plan) -> str | None:
    """Said on the console and in run.yaml when the plan's cap leaves less than the usual margin."""
    if time_limit_s + LIFETIME_MARGIN_S <= plan.max_lifetime_s:
        return None
    return (
        f"E2B's {plan.name} plan keeps a sandbox at most {plan.max_lifetime_s} s, so an episode that uses all of "
        f"--time-limit {time_limit_s:g} may lose its sandbox before it ends; use --time-limit "
        f"{plan.max_lifetime_s - LIFETIME_MARGIN_S} or less{_other_plan(plan)}"
    )


def _other_plan(plan: Plan) -> str:
    return " or set E2B_PLAN=pro if the account has it" if plan.name == "hobby" else ""


def create_backoff_s() -> list[float]:
    """The waits after successive 429s: "full jitter", each uniform up to its step of `CREATE_BACKOFF_S`."""
    return [random.uniform(0.1 * step, step) for step in CREATE_BACKOFF_S]

"""The `judge` grader: a panel of LLM judges, majority with a quorum (docs/GRADERS.md §4). The panel asks
each judge through a completion callable the run gives it (litellm: harness/run/judging/judges.py).

A verdict needs at least `quorum` judges that returned a valid verdict; fewer is `judge_error` (never a
wrong answer), which a resume grades again. Every call (or cache hit) is handed to `log` as a
`judge_call` event with its tokens and cost; the cost is the row's `judge_cost_usd`, apart from the agent's.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.core.reply import Attempt
from harness.grading.answer import find_answer_tag
from harness.grading.gold import GoldSpec
from harness.grading.judge_cache import JudgeCache, cache_key
from harness.grading.judge_prompt import MAX_ANSWER_CHARS
from harness.grading.judge_protocol import OURS, OURS_SCORE, JudgeProtocol
from harness.grading.record import Grade, Verdict

GRADER_VERSION = "judge-1.1"
_JUDGE_PARAMS: dict[str, Any] = {"temperature": 0.0}
"""Asked of every judge; a model that refuses a parameter is asked without it (`dropped_params` in its call)."""
_FINAL_REPLY_CHARS = 20_000
"""A longer final reply is not sent to judges that read the whole reply (`unparseable/TOO_LONG`)."""

JudgeLog = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class JudgeReply:
    """One judge model's reply, as the completion hands it back."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    attempts: list[Attempt] = field(default_factory=list)
    """Failed attempts (and the waits after them) before this reply."""


class JudgeCallFailed(Exception):
    """The judge model gave no reply; `refused_temperature` when it refused the temperature parameter."""

    def __init__(self, message: str, attempts: list[Attempt], refused_temperature: bool = False):
        super().__init__(message)
        self.attempts = attempts
        self.refused_temperature = refused_temperature
        self.dropped_params: list[str] = []
        """What `JudgePanel.complete_at` had dropped when the call failed."""


class JudgeCompletion(Protocol):
    """Asks one judge model (its litellm name) the messages at a temperature (None: the model's own), within
    the panel's time, with a `response_format` when one is given; raises `JudgeCallFailed`. The run builds it
    (litellm); grading never calls a provider."""

    def __call__(
        self, model: str, messages: list[dict[str, str]], temperature: float | None, /, **options: Any
    ) -> JudgeReply: ...


COUNTED_INCORRECT = "COUNTED_INCORRECT"
"""A grade's reason: a judge failed after the protocol's attempts and its protocol counts that as incorrect."""


class JudgeNotConfigured(RuntimeError):
    """A judge-graded task reached a grader without a panel (a harness bug: plan_run requires --judge)."""


class JudgeGrader:
    """In the registry for its name, version and gold check; grading goes through a `JudgePanel`."""

    name = "judge"
    version = GRADER_VERSION

    def validate(self, gold: GoldSpec) -> None:
        """Any non-empty reference answer can be judged (tasks.py already requires one)."""

    def grade(self, submission: str | None, gold: GoldSpec) -> Grade:
        raise JudgeNotConfigured("the judge grader needs a judge panel (--judge)")


@dataclass(frozen=True)
class JudgePanel:
    models: list[str]
    quorum: int
    """Valid verdicts needed for a grade; fewer is judge_error."""
    cache: JudgeCache
    complete: JudgeCompletion
    protocol: JudgeProtocol = OURS
    """How the `judge` grader asks and reads (`--judge-prompt`); ours by default."""
    score_protocol: JudgeProtocol = OURS_SCORE
    """How the `score` grader asks and reads (`--judge-prompt` with a `score` rule); ours by default."""

    def complete_at(
        self, model: str, messages: list[dict[str, str]], temperature: float, response_format: str | None = None
    ) -> tuple[JudgeReply, list[str]]:
        """The judge's reply at TEMPERATURE, or, from a model that takes none (some reasoning models), asked
        again without it; and the parameters dropped. Raises `JudgeCallFailed` with its `dropped_params`."""
        options = {"response_format": {"type": response_format}} if response_format else {}
        try:
            return self.complete(model, messages, temperature, **options), []
        except JudgeCallFailed as error:
            if not error.refused_temperature:
                raise
        try:
            return self.complete(model, messages, None, **options), ["temperature"]
        except JudgeCallFailed as error:
            error.dropped_params = ["temperature"]
            raise

    def describe(self) -> dict[str, Any]:
        """For the protocol: what can change a verdict (a given protocol's digest and reading rule included)."""
        described = {"models": self.models, "quorum": self.quorum, "prompt": self.protocol.digest}
        described["params"] = _JUDGE_PARAMS
        for name, protocol in (("judge_prompt", self.protocol), ("score_prompt", self.score_protocol)):
            if not protocol.ours:
                described[name] = {"digest": protocol.digest} | protocol.describe()
        return described

    def judged_text(self, submission: str | None, protocol: JudgeProtocol) -> tuple[str | None, Grade | None]:
        """What the judges read of a submission (the answer tag's content, or the whole final reply), or the
        grade when there is nothing to judge."""
        tag = find_answer_tag(submission or "")
        if protocol.reads == "final_reply" and (submission or "").strip():
            text = (submission or "").strip()
        elif tag.reason is not None:
            return None, Grade.uniform(Verdict.NO_ANSWER, [tag.reason], tag.content, GRADER_VERSION)
        else:
            text = (tag.content or "").strip()
        limit = MAX_ANSWER_CHARS if protocol.reads == "answer" else _FINAL_REPLY_CHARS
        if len(text) > limit:
            return None, Grade.uniform(Verdict.UNPARSEABLE, ["TOO_LONG"], tag.content, GRADER_VERSION)
        return text, None

    def grade(self, submission: str | None, gold: GoldSpec, log: JudgeLog | None = None) -> Grade:
        answer, ungraded = self.judged_text(submission, self.protocol)
        if ungraded is not None or answer is None:
            return ungraded or Grade.uniform(Verdict.NO_ANSWER, ["NO_ANSWER"], None, GRADER_VERSION)
        tag = find_answer_tag(submission or "")
        verdicts: list[str] = []
        failures: list[str] = []
        costs: list[float] = []
        for model in self.models:
            event = self.ask(model, gold, answer, self.protocol)
            if log is not None:
                log(event)
            if event["verdict"]:
                verdicts.append(str(event["verdict"]))
            if not event["verdict"] or event.get("counted_incorrect"):
                failures.append(event["failure"])
            if event.get("counted_incorrect"):
                failures.append(COUNTED_INCORRECT)
            if event["cost_usd"] is not None and not event["cached"]:
                costs.append(event["cost_usd"])
        cost = round(sum(costs), 8) if costs else None
        tally = f"{verdicts.count('CORRECT')}/{len(verdicts)} CORRECT"
        if len(verdicts) < self.quorum:
            reasons = [*sorted(set(failures)), "NO_QUORUM"]
            return Grade(
                Verdict.JUDGE_ERROR,
                Verdict.JUDGE_ERROR,
                Verdict.JUDGE_ERROR,
                reasons,
                tag.content,
                tally,
                None,
                GRADER_VERSION,
                judge_cost_usd=cost,
            )
        # A strict majority of the valid verdicts; a tie is not correct.
        verdict = Verdict.CORRECT if 2 * verdicts.count("CORRECT") > len(verdicts) else Verdict.WRONG_VALUE
        reasons = ["JUDGES_DISAGREE"] if len(set(verdicts)) > 1 else []
        reasons += sorted(set(failures))
        return Grade(verdict, verdict, verdict, reasons, tag.content, tally, None, GRADER_VERSION, judge_cost_usd=cost)

    def ask(self, model: str, gold: GoldSpec, answer: str, protocol: JudgeProtocol) -> dict[str, Any]:
        """One judge's verdict (or score), from the cache or a call: the `judge_call` event."""
        digest = protocol.digest
        key = cache_key(model, digest, _JUDGE_PARAMS, gold.question, gold.answer, answer)
        event: dict[str, Any] = {"model": model, "prompt": digest, "params": _JUDGE_PARAMS, "cache_key": key}
        hit = self.cache.get(key)
        if hit is not None and protocol.read_cached(hit.get("verdict")) is not None:
            return event | {
                "cached": True,
                "verdict": hit["verdict"],
                "reply": hit["reply"],
                "failure": None,
                "dropped_params": hit.get("dropped_params", []),
                "input_tokens": 0,
                "output_tokens": 0,
                "cost_usd": None,
                "latency_s": 0.0,
            }
        messages = protocol.messages(protocol.prompt(gold.question, gold.answer, answer))
        asked = [self._asked(model, messages, protocol, answer)]
        while asked[-1]["verdict"] is None and len(asked) < protocol.attempts:
            asked.append(self._asked(model, messages, protocol, answer))
        last = asked[-1]
        if len(asked) > 1:  # every attempt's cost and tokens, and what the earlier ones met
            costs = [one["cost_usd"] for one in asked if one["cost_usd"] is not None]
            last["cost_usd"] = round(sum(costs), 8) if costs else None
            last["input_tokens"] = sum(one["input_tokens"] for one in asked)
            last["output_tokens"] = sum(one["output_tokens"] for one in asked)
            last["earlier"] = [{"failure": one["failure"], "reply": one["reply"]} for one in asked[:-1]]
        if last["verdict"] is not None:
            entry = {
                "model": model,
                "verdict": last["verdict"],
                "reply": last["reply"],
                "dropped_params": last["dropped_params"],
            }
            with contextlib.suppress(OSError):  # a cache that cannot be written costs a call later, never the grade
                self.cache.put(key, entry)
        elif protocol.unreadable == "incorrect" and protocol.score_range is None:
            last |= {"verdict": "INCORRECT", "counted_incorrect": True}  # never cached: a new run asks again
        return event | last

    def _asked(
        self, model: str, messages: list[dict[str, str]], protocol: JudgeProtocol, answer: str
    ) -> dict[str, Any]:
        """One call and its reading (the `judge_call` event's fields but for the cache's); ANSWER is the
        agent's text the judge was shown, whose objects are never read as the verdict."""
        started = time.monotonic()
        try:
            reply, dropped = self.complete_at(model, messages, _JUDGE_PARAMS["temperature"], protocol.response_format)
        except JudgeCallFailed as error:
            return {
                "cached": False,
                "verdict": None,
                "reply": None,
                "failure": "JUDGE_CALL_FAILED",
                "dropped_params": error.dropped_params,
                "error": str(error),
                "attempts": error.attempts,
                "input_tokens": 0,
                "output_tokens": 0,
                "cost_usd": None,
                "latency_s": round(time.monotonic() - started, 3),
            }
        verdict = protocol.read(reply.text, answer)
        return {
            "cached": False,
            "verdict": verdict,
            "reply": reply.text,
            "dropped_params": dropped,
            "failure": None if verdict is not None else "JUDGE_MALFORMED",
            "attempts": reply.attempts,
            "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens,
            "cost_usd": reply.cost_usd,
            "latency_s": round(time.monotonic() - started, 3),
        }

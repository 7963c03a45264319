"""The judge panel from its flags, and its completion through litellm: how a run, an import or a re-grade
asks its judges."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from harness.core.errors import InputError
from harness.core.messages import Message
from harness.grading.judge import JudgeCallFailed, JudgeCompletion, JudgePanel, JudgeReply
from harness.grading.judge_cache import JudgeCache
from harness.grading.judge_protocol import load_protocol
from harness.inputs.config import JUDGE_TIMEOUT_S, MAX_RETRIES
from harness.models.aliases import resolve_model
from harness.models.base import ContextOverflow, ModelError


@dataclass(frozen=True)
class JudgeOptions:
    """`--judge` and its flags, as a run or an import takes them."""

    judge: str | None
    """Comma-separated model names or aliases."""
    quorum: int | None = None
    api_base: str | None = None
    timeout_s: float = JUDGE_TIMEOUT_S
    max_retries: int = MAX_RETRIES
    prompt: Path | None = None
    """`--judge-prompt`: a judge protocol file (grading/judge_protocol.py); None: ours."""

    def panel(self, results_dir: Path, needed_by: str, aliases: dict[str, str] | None = None) -> JudgePanel:
        """The panel, its cache shared by every run in `results_dir`; `needed_by` says why one is required."""
        names = [name.strip() for name in (self.judge or "").split(",") if name.strip()]
        if not names:
            raise InputError(f"--judge: required: {needed_by}")
        if self.quorum is not None and self.quorum < 1:
            raise InputError(f"--judge-quorum: {self.quorum} must be at least 1")
        models = [_judge_model(name, aliases or {}) for name in names]
        quorum = self.quorum or len(models) // 2 + 1
        if quorum > len(models):
            raise InputError(f"--judge-quorum: {quorum} is more than the {len(models)} judges of --judge")
        from harness.models.litellm_model import provider_of  # litellm: only when a judge is needed
        from harness.models.preflight import check_endpoint

        for model in models:
            provider_of(model, "--judge")
        if self.api_base:
            check_endpoint(self.api_base, "--judge-api-base")
        completion = litellm_judges(self.api_base, self.timeout_s, self.max_retries)
        panel = JudgePanel(models, quorum, JudgeCache(results_dir / ".judge-cache"), completion)
        if self.prompt is None:
            return panel
        protocol = load_protocol(self.prompt)
        if protocol.score_range is not None:
            return dataclasses.replace(panel, score_protocol=protocol)
        return dataclasses.replace(panel, protocol=protocol)


def _judge_model(name: str, aliases: dict[str, str]) -> str:
    try:
        return resolve_model(name, aliases).model
    except InputError:
        message = f"--judge: unknown model {name!r}: write provider/model as litellm does, or an alias"
        raise InputError(message) from None


def litellm_judges(
    api_base: str | None, timeout_s: float = JUDGE_TIMEOUT_S, max_retries: int = MAX_RETRIES
) -> JudgeCompletion:
    """Each judge call as a text-format litellm model call, retried as the agent's are."""

    def complete(
        model: str, messages: list[dict[str, str]], temperature: float | None, /, **options: Any
    ) -> JudgeReply:
        # litellm takes 2.5 s and 200 MB to import: only a run that grades with a judge pays for it
        from harness.models.litellm_model import LiteLLMModel, ProviderSettings, bundled_price

        settings = ProviderSettings(
            model,
            action_format="text",
            api_base=api_base,
            temperature=temperature,
            max_retries=max_retries,
            call_timeout_s=timeout_s,
            model_args=dict(options),  # a protocol's response_format
        )
        try:
            prompt = cast(list[Message], messages)  # the judge's system and user texts
            reply = LiteLLMModel(settings, None, bundled_price(model)).query(prompt, timeout_s)
        except ModelError as error:
            refused = "temperature" in str(error).lower() and not isinstance(error, ContextOverflow)
            raise JudgeCallFailed(str(error), error.attempts, refused) from error
        return JudgeReply(
            reply.text, reply.usage.input_tokens, reply.usage.output_tokens, reply.cost_usd, reply.attempts
        )

    return complete

"""Real providers through litellm: any `provider/model` string, tool calls or text actions, retries."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import litellm
from litellm.llms.custom_httpx.http_handler import get_ssl_configuration
from pydantic import ValidationError

from harness.core.errors import InputError
from harness.core.json_text import sendable
from harness.core.messages import Message, ProviderOpaque
from harness.core.record import validation_problem
from harness.core.reply import Attempt, ToolCall, Usage
from harness.core.status import NO_RETRY_MENDS
from harness.models.base import ContextOverflow, ModelError, ModelReply, estimate_tokens
from harness.models.bounded_http import bounded_transport, call_limits
from harness.models.concurrency import gate_key, provider_gate
from harness.models.connections import shut_down_connections_to
from harness.models.image_tokens import image_tokens, split_images
from harness.models.images_wire import images_placed_for
from harness.models.in_flight import IN_FLIGHT
from harness.models.litellm_tool_calls import keep_unparsable_tool_calls
from harness.models.permanent import permanent_cause, unreachable_cause
from harness.models.prices import Price, price_from_litellm
from harness.models.retries import (
    MalformedResponse,
    ReplyRefused,
    RetriedCall,
    describe_error,
    is_context_overflow,
)

litellm.suppress_debug_info = True
keep_unparsable_tool_calls()
# Every synchronous call's HTTP bounded in time and size (`models/bounded_http.py`): the OpenAI SDK's providers
# take `client_session`, litellm's own HTTP handler `sync_transport` (read with getattr: not declared)
_BOUNDED = bounded_transport(get_ssl_configuration())
litellm.client_session = httpx.Client(transport=_BOUNDED, follow_redirects=True, timeout=None)
setattr(litellm, "sync_transport", _BOUNDED)  # noqa: B010

_REASONING_ONLY_REPLY = "Unknown items in responses API response"
"""How litellm fails on a Responses API reply that holds reasoning and nothing else: the model's empty reply, a
turn it spent (its tokens unknown), not a connection error to retry."""


@dataclass(frozen=True)
class ProviderSettings:
    model: str
    """The litellm model string, e.g. `deepseek/deepseek-v4-pro` or `hosted_vllm/qwen3`."""
    action_format: str = "toolcall"
    api_base: str | None = None
    api_key: str | None = None
    """None: litellm reads the provider's usual variable (DEEPSEEK_API_KEY, OPENAI_API_KEY, ...)."""
    temperature: float | None = 1.0
    """None: not sent (for a model that refuses the parameter, e.g. a judge's reasoning model)."""
    model_args: dict[str, Any] = field(default_factory=dict)
    """Passed through to litellm.completion, e.g. reasoning_effort=high."""
    max_retries: int = 5
    max_in_flight: int | None = None
    """The most calls to this provider and endpoint in flight at once, the start of its adaptive limit
    (`models/concurrency.py`); None: no limit of ours."""
    call_timeout_s: float = 600.0
    """Upper bound (wall time) for one call, failed attempts and waits included; the episode's time left bounds
    each attempt too."""
    max_output_tokens: int | None = None
    """The reply's cap, sent as `max_tokens` (a `max_tokens` in model_args wins); None: not sent."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """The tools the solver offers the model, each as a chat-completions request offers it (`toolcall` format)."""


def _known_info(model: str) -> Mapping[str, Any] | None:
    """The model's entry in litellm's bundled map; None when the map has none. litellm answers an unmapped name of
    a known provider (`anthropic/claude-sonnet-9`) with a guess (prices 0, another model's window): an answer
    whose key is not in the map is no knowledge."""
    try:
        info = litellm.get_model_info(model)
    except Exception:  # litellm raises a bare Exception for unmapped models
        return None
    return info if info.get("key") in litellm.model_cost else None


def context_window_of(model: str) -> int | None:
    """The model's input window from litellm's bundled model map, None when unknown."""
    info = _known_info(model)
    if info is None:
        return None
    return info.get("max_input_tokens") or info.get("max_tokens")


UNKNOWN_MODEL_OUTPUT_CAP = 8192
"""The reply cap of a model litellm's map does not know (a local server's): a reply cannot run for ever."""


def output_maximum_of(model: str) -> int | None:
    """The model's own output maximum from litellm's bundled map, None when unknown."""
    info = _known_info(model)
    maximum = None if info is None else info.get("max_output_tokens")
    return maximum if isinstance(maximum, int) and maximum > 0 else None


def bundled_price(model: str) -> Price | None:
    """The model's price in litellm's bundled map (offline), None when the map has none."""
    info = _known_info(model)
    return None if info is None else price_from_litellm(dict(info))


class ModelAbandoned(Exception):
    """The run was cancelled: an abandoned call makes no further attempts (never retried)."""


class LiteLLMModel:
    def __init__(self, settings: ProviderSettings, context_window: int | None, price: Price | None = None):
        self.name = settings.model
        self.context_window = context_window
        self._settings = settings
        self._price = price
        """What a call costs (`models/prices.py`); None: the price is unknown, the cost is null."""
        self._abandoned = threading.Event()

    def abandon(self) -> None:
        """The run was cancelled during a call (another thread waits on it): no further attempt, and the
        connections to an `--api-base` endpoint shut down, so the server stops and the call's thread ends.
        Without an api_base the provider's own endpoint is litellm's to know: the thread ends at its timeout."""
        self._abandoned.set()
        if self._settings.api_base:
            shut_down_connections_to(self._settings.api_base)

    @property
    def provider(self) -> str:
        """litellm's provider of the model ("openai" for one it does not know: a local server's)."""
        try:
            return str(litellm.get_llm_provider(self._settings.model)[1])
        except Exception:  # litellm raises its BadRequestError, or a bare Exception, for an unknown provider
            return "openai"

    def count_tokens(self, messages: list[Message]) -> int:
        """The provider's tokenizer where litellm has it, else its bundled default (offline either way); each
        image by the provider's own documented rule (models/image_tokens.py)."""
        text_only, sizes = split_images(messages)
        images = sum(image_tokens(self.provider, width, height) for width, height in sizes)
        try:
            return int(litellm.token_counter(model=self._settings.model, messages=text_only)) + images
        except Exception:  # a message shape the counter does not know: fall back to the estimate
            return estimate_tokens(text_only) + images

    def query(self, messages: list[Message], timeout_s: float) -> ModelReply:
        settings = self._settings
        request: dict[str, Any] = {
            "model": settings.model,
            "messages": images_placed_for(
                self.provider, sendable(messages)
            ),  # a lone surrogate of an earlier reply: no UTF-8 body takes it
            "api_base": settings.api_base,
            "api_key": settings.api_key,
            "num_retries": 0,  # retries are ours (retries.py), so they are logged and bounded by the clock
            "max_retries": 0,
            **({"max_tokens": settings.max_output_tokens} if settings.max_output_tokens else {}),
            **settings.model_args,
        }
        if settings.temperature is not None:
            request["temperature"] = settings.temperature
        if settings.action_format == "toolcall" and settings.tools:
            request["tools"] = settings.tools

        def call(timeout: float) -> Any:
            if self._abandoned.is_set():
                raise ModelAbandoned("the run was cancelled")
            with call_limits(timeout) as limits:
                try:
                    response = litellm.completion(**request, timeout=timeout)
                except Exception as error:
                    # however the SDK wraps what the socket met, the call's limits say what it was
                    if limits.refused is not None:
                        raise ReplyRefused(limits.refused) from None
                    if limits.expired and not isinstance(error, litellm.Timeout):
                        raise litellm.Timeout(f"no reply within {timeout:.1f} s", settings.model, "") from None
                    if isinstance(error, litellm.APIConnectionError) and _REASONING_ONLY_REPLY in str(error):
                        return None
                    raise
            if not response.choices:  # litellm itself turns a choice without a message into a 5xx
                raise MalformedResponse("the provider's reply has no choices")
            return response

        gate = None
        if settings.max_in_flight is not None:
            gate = provider_gate(settings.model, settings.api_base, settings.max_in_flight)
        retried = RetriedCall(call, settings.max_retries, settings.call_timeout_s, timeout_s, gate)
        attempts, waits = retried.attempts, retried.gate_waits
        try:
            with IN_FLIGHT.calling(gate_key(settings.model, settings.api_base)):
                response = retried.run()
        except Exception as error:  # every provider failure becomes one model_error (or context_limit) line
            if is_context_overflow(error):
                message = f"{settings.model}: {describe_error(error)['message']}"
                raise ContextOverflow(message, attempts, queued_s=sum(waits)) from None
            raise ModelError(_failure_message(settings.model, error), attempts, queued_s=sum(waits)) from None
        try:
            reply = (
                ModelReply(text="", attempts=attempts)
                if response is None
                else _reply_from(response, attempts, self._price)
            )
        except ValidationError as error:  # a reply whose parts are not of their types is the provider's error
            raise ModelError(f"{settings.model}: malformed reply: {validation_problem(error)}", attempts) from None
        return reply.model_copy(update={"queued_s": round(sum(waits), 3)})


def _failure_message(model: str, error: BaseException) -> str:
    """The model_error's detail: the error's class, status and first line (a connection that failed: what the
    socket met, often only in the exception the error was raised from), then `NO_RETRY_MENDS` for a failure no
    retry mends."""
    if (unreachable := unreachable_cause(error)) is not None:  # litellm may call it a 500: no server answered
        return f"{model}: cannot connect ({unreachable}){NO_RETRY_MENDS}"
    detail = describe_error(error)
    status = f" {detail['status']}" if detail["status"] else ""
    message = f"{model}:{status} {detail['error']}: {detail['message']}"
    cause = permanent_cause(error)
    if cause is None:
        return message
    return (message if cause in message else f"{message} ({cause})") + NO_RETRY_MENDS


def _reply_from(response: Any, attempts: list[Attempt], price: Price | None) -> ModelReply:
    choice = response.choices[0]
    message = choice.message
    finish_reason = getattr(choice, "finish_reason", None)
    calls = [
        ToolCall(id=call.id or f"call_{index}", name=call.function.name or "", arguments=call.function.arguments or "")
        for index, call in enumerate(message.tool_calls or [])
    ]
    usage = _usage(response)
    reasoning = getattr(message, "reasoning_content", None)
    return ModelReply(
        text=message.content or "",
        tool_calls=calls,
        usage=usage,
        cost_usd=_cost(usage, price),
        attempts=attempts,
        reasoning=reasoning if isinstance(reasoning, str) else None,
        provider_state=_provider_state(message),
        model_id=_returned_model(response),
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
    )


_MODEL_ID_CHARS = 200
"""A returned model id longer than this is cut: a provider's id is a name, not a payload."""


def _returned_model(response: Any) -> str | None:
    """The model the reply says answered (litellm's `response.model`, which it maps from Gemini's
    `modelVersion`); None when the reply names none."""
    model = getattr(response, "model", None)
    return model[:_MODEL_ID_CHARS] if isinstance(model, str) and model else None


def _provider_state(message: Any) -> ProviderOpaque:
    """The message fields litellm reads back from an assistant message to continue the provider's reasoning,
    kept as they came: Anthropic's signed thinking blocks (with thinking on, the turn that made tool calls must
    start with them), and the reasoning items and replay record of a reply through litellm's Responses API bridge
    (e.g. gpt-5.5 with tools). Gemini's thought signatures ride in the tool-call ids."""
    state: dict[str, Any] = {}
    thinking_blocks = getattr(message, "thinking_blocks", None)
    if isinstance(thinking_blocks, list) and thinking_blocks:
        state["thinking_blocks"] = [dict(block) for block in thinking_blocks if isinstance(block, Mapping)]
    fields = getattr(message, "provider_specific_fields", None) or {}
    if "openai_responses_replay" in fields:
        state["provider_specific_fields"] = fields
        state["reasoning_items"] = getattr(message, "reasoning_items", None) or []
    return state


def _token_count(value: object) -> int:
    """A reported count as a non-negative int: negative, NaN, infinite or non-numeric counts are 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return max(int(value), 0)


def _usage(response: Any) -> Usage:
    """The reply's token counts, cleaned: a provider's negative count would otherwise make the cost negative and
    lift --max-cost. Cached and cache-written tokens are part of the prompt, so together never more than it."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return Usage()
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    input_tokens = _token_count(getattr(usage, "prompt_tokens", 0))
    cached = min(_token_count(getattr(prompt_details, "cached_tokens", 0)), input_tokens)
    written = max(
        _token_count(getattr(usage, "cache_creation_input_tokens", 0)),
        _token_count(getattr(prompt_details, "cache_creation_tokens", 0)),
    )
    return Usage(
        input_tokens=input_tokens,
        output_tokens=_token_count(getattr(usage, "completion_tokens", 0)),
        cached_tokens=cached,
        reasoning_tokens=_token_count(getattr(completion_details, "reasoning_tokens", 0)),
        cache_write_tokens=min(written, input_tokens - cached),
    )


def _cost(usage: Usage, price: Price | None) -> float | None:
    """The call's price from its cleaned tokens; None when the price is unknown or the result absurd."""
    if price is None:
        return None
    cost = price.cost(usage)
    return cost if math.isfinite(cost) and cost >= 0 else None


_LOCAL_SERVER_HINT = "e.g. hosted_vllm/NAME or openai/NAME with --api-base http://127.0.0.1:8000/v1"


def provider_of(model: str, flag: str) -> str:
    """The litellm provider of `model`; an `InputError` naming `flag` when litellm knows none."""
    try:
        return str(litellm.get_llm_provider(model)[1])
    except Exception:  # litellm raises its BadRequestError, or a bare Exception, for an unknown provider
        prefix = model.split("/", 1)[0] if "/" in model else model
        raise InputError(
            f"{flag} {model}: litellm knows no provider {prefix!r}: write provider/model as litellm does "
            f"(https://docs.litellm.ai/docs/providers), {_LOCAL_SERVER_HINT}"
        ) from None


def not_taken(model: str, temperature: float | None, model_args: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    """Those of NAMES (`temperature`, keys of MODEL_ARGS such as `seed`) that MODEL's API does not take as given,
    by litellm's own offline mapping of the parameters (OpenAI's GPT-5 family takes temperature 1 only while
    reasoning; Anthropic and Z.ai take no seed) and Anthropic's rule that extended thinking takes temperature 1
    only; a model litellm cannot map: none."""
    try:
        model_name, provider, _, _ = litellm.get_llm_provider(model)
        sent = litellm.get_optional_params(
            model=model_name,
            custom_llm_provider=provider,
            temperature=temperature,
            drop_params=True,
            **dict(model_args),
        )
    except Exception:  # a parameter litellm's mapping does not know, an unknown provider: said by the call itself
        return []
    thinking = sent.get("thinking")
    if (
        provider == "anthropic"
        and isinstance(thinking, dict)
        and thinking.get("type") == "enabled"
        and temperature != 1
    ):
        sent.pop("temperature", None)
    return [name for name in names if name not in sent]


_UNCHECKED_KEYS = {"zai": "ZAI_API_KEY"}
"""Key variables of providers that litellm's environment check passes without a key."""


def require_provider_key(name: str) -> None:
    """Fail before the run, not as a failed call in every episode, when no key is set."""
    check = litellm.validate_environment(model=name)
    unchecked = _UNCHECKED_KEYS.get(name.split("/", 1)[0])
    if unchecked and not os.environ.get(unchecked):
        check = {"keys_in_environment": False, "missing_keys": [unchecked]}
    if not check["keys_in_environment"]:
        missing = " or ".join(check["missing_keys"])
        raise InputError(
            f"--model {name}: no API key: set {missing} (or name the variable with --api-key-env); for a local "
            f"server any value works (e.g. {missing.split(' or ')[0]}=dummy), and hosted_vllm/NAME needs none"
        )

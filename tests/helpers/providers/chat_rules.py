"""What DeepSeek, Z.ai and SGLang refuse in a chat-completions request, and the 400 body each sends for it.

Each rule is one the provider documents (or, where its documentation is silent on a detail, the behaviour
its users measured against the live service, named where it is used):

- DeepSeek: https://api-docs.deepseek.com/guides/thinking_mode (section "Tool Calls") and
  https://api-docs.deepseek.com/guides/reasoning_model; errors as the service sends them (quoted in e.g.
  https://github.com/decolua/9router/issues/773).
- Z.ai: https://docs.z.ai/guides/capabilities/thinking-mode, https://docs.z.ai/api-reference/llm/chat-completion
  and https://docs.z.ai/api-reference/api-code (business error codes).
- SGLang: https://docs.sglang.ai/advanced_features/separate_reasoning.html,
  https://docs.sglang.ai/advanced_features/tool_parser.html and its OpenAI server
  (`python/sglang/srt/entrypoints/openai/serving_chat.py`: history tool-call arguments must parse as JSON).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tests.helpers.providers.image_rules import OPENAI_RULES, check_images, openai_chat_images
from tests.helpers.providers.loopback import ProviderRuleBroken

Request = dict[str, Any]


@dataclass(frozen=True)
class Refusal:
    """A request the provider answers with `status` and its own JSON `body`."""

    status: int
    body: dict[str, Any]

    @property
    def message(self) -> str:
        error = self.body.get("error")
        return str(error.get("message") if isinstance(error, dict) else self.body.get("message"))


def deepseek_error(message: str, status: int = 400) -> Refusal:
    """DeepSeek's error body (OpenAI's shape, `code` repeating the type)."""
    kind = "invalid_request_error" if status == 400 else "rate_limit_reached_error"
    return Refusal(status, {"error": {"message": message, "type": kind, "param": None, "code": kind}})


def zai_error(code: str, message: str, status: int = 400) -> Refusal:
    """Z.ai's error body: the business code (api-code page) and its message."""
    return Refusal(status, {"error": {"code": code, "message": message}})


def sglang_error(message: str, status: int = 400) -> Refusal:
    """SGLang's `ErrorResponse` (serving_base.create_error_response)."""
    kind = "BadRequestError" if status == 400 else "InternalServerError"
    return Refusal(status, {"object": "error", "message": message, "type": kind, "param": None, "code": status})


DEEPSEEK_REASONING_MISSING = "The `reasoning_content` in the thinking mode must be passed back to the API."
DEEPSEEK_TOOLS_UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. (insufficient tool messages following tool_calls message)"
)


def unanswered_tool_calls(messages: list[dict[str, Any]]) -> list[str]:
    """Ids of tool calls not answered by the tool messages straight after their assistant message."""
    missing: list[str] = []
    for index, message in enumerate(messages):
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        answered: set[str] = set()
        for later in messages[index + 1 :]:
            if later.get("role") != "tool":
                break
            answered.add(str(later.get("tool_call_id")))
        missing += [str(call.get("id")) for call in message["tool_calls"] if str(call.get("id")) not in answered]
    return missing


def user_turns(messages: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """The messages between one user message and the next (DeepSeek's unit for passing reasoning back)."""
    turn: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "user":
            yield turn
            turn = []
        else:
            turn.append(message)
    yield turn


def deepseek_rules(request: Request) -> Refusal | None:
    """DeepSeek V4 in thinking mode (the default; `thinking.type: disabled` turns it off). Between two user
    messages in which the model called tools, every assistant message must carry its `reasoning_content`
    back, in all later requests. The field present is what the service checks: DeepSeek itself returns
    `"reasoning_content": ""` on tool-call turns without reasoning, and that empty string passed back is
    accepted (measured by its users: https://github.com/Oaklight/llm-rosetta/issues/356,
    https://github.com/NousResearch/hermes-agent/issues/16021); a message without the field is refused.
    Every tool call must be answered by the tool messages right after it (the OpenAI rule DeepSeek applies)."""
    messages = request.get("messages") or []
    if unanswered_tool_calls(messages):
        return deepseek_error(DEEPSEEK_TOOLS_UNANSWERED)
    if (request.get("thinking") or {}).get("type") == "disabled":
        return None
    for turn in user_turns(messages):
        assistants = [message for message in turn if message.get("role") == "assistant"]
        if any(message.get("tool_calls") for message in assistants) and any(
            not isinstance(message.get("reasoning_content"), str) for message in assistants
        ):
            return deepseek_error(DEEPSEEK_REASONING_MISSING)
    return None


ZAI_TEMPERATURE = "Invalid temperature parameter. Please check the documentation"


def zai_rules(request: Request) -> Refusal | None:
    """Z.ai chat completions (GLM-5.1): `temperature` in [0, 1]; `thinking.type` enabled or disabled; a tool
    message answers a tool call (`tool_call_id`, error 1214). Interleaved thinking keeps `reasoning_content`
    with the tool results: the thinking-mode page says it *should* be returned (no 400 is documented for
    its absence, so none is sent; the conformance test checks it comes back)."""
    temperature = request.get("temperature")
    if temperature is not None and not 0 <= float(temperature) <= 1:
        return zai_error("1214", ZAI_TEMPERATURE)
    thinking = request.get("thinking")
    if thinking is not None and (thinking.get("type") not in ("enabled", "disabled")):
        return zai_error("1214", "Invalid thinking parameter. Please check the documentation")
    if unanswered_tool_calls(request.get("messages") or []):
        return zai_error("1214", "Invalid messages parameter. Please check the documentation")
    return None


SGLANG_ARGUMENTS_NOT_JSON = "Assistant tool call function.arguments must be valid JSON."


def sglang_rules(request: Request) -> Refusal | None:
    """SGLang (`--reasoning-parser qwen3 --tool-call-parser qwen3_coder`) renders the history through the
    model's chat template, which needs every earlier tool call's `arguments` as a JSON object; a vision model's
    images follow OpenAI's rules (its chat template places `image_url` parts of user messages)."""
    refusal = image_rules(request)
    if refusal is not None:
        return sglang_error(refusal.message)
    for message in request.get("messages") or []:
        for call in message.get("tool_calls") or [] if message.get("role") == "assistant" else []:
            arguments = call.get("function", {}).get("arguments")
            if not isinstance(arguments, str):
                continue
            try:
                parsed = json.loads(arguments)
            except json.JSONDecodeError:
                return sglang_error(SGLANG_ARGUMENTS_NOT_JSON)
            if not isinstance(parsed, dict):
                return sglang_error("Assistant tool call function.arguments must be a JSON object.")
    return None


def openai_error(message: str, status: int = 400, code: str | None = None) -> Refusal:
    """OpenAI's error body (https://platform.openai.com/docs/guides/error-codes)."""
    kind = "invalid_request_error" if status == 400 else "server_error"
    return Refusal(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})


def image_rules(request: Request) -> Refusal | None:
    """OpenAI's chat rules for images (tests/helpers/providers/image_rules.py), which OpenAI-compatible servers
    of vision models (SGLang, vLLM) follow: `image_url` parts in user messages only, within the limits."""
    try:
        check_images(openai_chat_images(request), OPENAI_RULES, "openai")
    except ProviderRuleBroken as broken:
        return openai_error(str(broken), code="invalid_value")
    return None


def openai_rules(request: Request) -> Refusal | None:
    """OpenAI chat completions: every tool call answered by the tool messages right after it, and the image
    rules."""
    if unanswered_tool_calls(request.get("messages") or []):
        return openai_error(DEEPSEEK_TOOLS_UNANSWERED)
    return image_rules(request)


@dataclass(frozen=True)
class Provider:
    """One provider's chat-completions service: where it listens, what it refuses, how it says so."""

    name: str
    path_prefix: str
    """The base URL's path (litellm appends `/chat/completions`)."""
    key_variable: str
    rules: Callable[[Request], Refusal | None]
    overflow: Refusal
    """Its answer to a prompt over the context window."""
    rate_limited: Refusal
    rate_limit_headers: dict[str, str]
    server_error: Refusal
    filtered_finish_reason: str
    """`finish_reason` of a reply its safety system cut."""


DEEPSEEK = Provider(
    name="deepseek",
    path_prefix="",
    key_variable="DEEPSEEK_API_KEY",
    rules=deepseek_rules,
    overflow=deepseek_error(
        "This model's maximum context length is 1048576 tokens. However, you requested 1050000 tokens "
        "(1050000 in the messages, 0 in the completion). Please reduce the length of the messages or completion."
    ),
    rate_limited=deepseek_error("Rate Limit Reached", 429),
    rate_limit_headers={},  # DeepSeek sends no Retry-After (https://api-docs.deepseek.com/quick_start/error_codes)
    server_error=Refusal(500, {"error": {"message": "Server error", "type": "server_error", "param": None}}),
    filtered_finish_reason="content_filter",
)
ZAI = Provider(
    name="zai",
    path_prefix="/api/paas/v4",
    key_variable="ZAI_API_KEY",
    rules=zai_rules,
    overflow=zai_error("1261", "Prompt exceeds max length"),
    rate_limited=zai_error("1302", "High concurrency usage of this API, please reduce concurrency", 429),
    rate_limit_headers={},
    server_error=zai_error("500", "Internal Error", 500),
    filtered_finish_reason="sensitive",
)
OPENAI = Provider(
    name="openai",
    path_prefix="/v1",
    key_variable="OPENAI_API_KEY",
    rules=openai_rules,
    overflow=openai_error(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        code="context_length_exceeded",
    ),
    rate_limited=openai_error("Rate limit reached", 429),
    rate_limit_headers={"Retry-After": "0"},
    server_error=openai_error("The server had an error while processing your request.", 500),
    filtered_finish_reason="content_filter",
)
SGLANG = Provider(
    name="sglang",
    path_prefix="/v1",
    key_variable="HOSTED_VLLM_API_KEY",
    rules=sglang_rules,
    overflow=sglang_error("The input (40000 tokens) is longer than the model's context length (32768 tokens)."),
    rate_limited=sglang_error("Too many requests", 429),
    rate_limit_headers={"Retry-After": "0"},
    server_error=sglang_error("Internal server error", 500),
    filtered_finish_reason="stop",  # a self-served model has no safety system: nothing is filtered
)

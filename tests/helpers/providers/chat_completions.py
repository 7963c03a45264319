"""A loopback chat-completions server that answers as DeepSeek, Z.ai or SGLang does, rules included.

It is tests/helpers/openai_server.py's server (real HTTP, port 0, scripted or conversation-driven replies) that
serves only its provider's path and checks every request against its provider's rules
(tests/helpers/providers/chat_rules.py, which names the documentation pages) before answering: a request that
breaks one gets the provider's own 400 body and is kept in `broken`. Replies are shaped as each provider
sends them: DeepSeek https://api-docs.deepseek.com/api/create-chat-completion (with `reasoning_content`),
Z.ai https://docs.z.ai/api-reference/llm/chat-completion (`reasoning_content`, `finish_reason: sensitive`),
SGLang https://docs.sglang.ai/advanced_features/separate_reasoning.html (`reasoning_content` split out by
`--reasoning-parser qwen3`; tool calls parsed by `--tool-call-parser qwen3_coder`, and left in `content`
as `<tool_call>` XML when the parser cannot read them).
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass
from typing import Any

from tests.helpers.openai_server import ScriptedOpenAIServer, Step
from tests.helpers.providers.chat_rules import Provider, Refusal
from tests.helpers.providers.image_rules import FoundImage, openai_chat_images

_call_numbers = itertools.count()


@dataclass(frozen=True)
class BrokenRule:
    """A request the fake refused, and the provider's message for it."""

    request_number: int
    message: str


def tool_call(command: str, arguments: str | None = None) -> dict[str, Any]:
    """One `bash` call as a provider sends it (`arguments` given: that text exactly, e.g. malformed JSON)."""
    text = json.dumps({"command": command}) if arguments is None else arguments
    return {
        "id": f"call_{next(_call_numbers):02d}_{time.monotonic_ns()}",
        "type": "function",
        "function": {"name": "bash", "arguments": text},
    }


def qwen3_coder_text(command: str) -> str:
    """A bash call in Qwen3-Coder's XML tool-call form, as the model writes it (and SGLang leaves it in
    `content` when its parser does not take it)."""
    return f"<tool_call>\n<function=bash>\n<parameter=command>\n{command}\n</parameter>\n</function>\n</tool_call>"


def chat_reply(
    content: str | None = "",
    reasoning: str | None = None,
    calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
    completion_tokens: int = 30,
) -> Step:
    """A 200 reply: one choice with `content`, `reasoning_content` (None: the field absent) and `calls`."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = calls
    reason = finish_reason or ("tool_calls" if calls else "stop")
    usage = {"prompt_tokens": 200, "completion_tokens": completion_tokens, "total_tokens": 200 + completion_tokens}
    return Step(text="", body={"choices": [{"index": 0, "message": message, "finish_reason": reason}], "usage": usage})


def refused(refusal: Refusal, headers: dict[str, str] | None = None) -> Step:
    """The provider's error answer, its own body."""
    return Step(status=refusal.status, error=refusal.message, error_body=refusal.body, headers=headers or {})


class ChatCompletionsProvider(ScriptedOpenAIServer):
    """The fake of `provider`; start() it and pass `base_url` as --api-base."""

    def __init__(self, provider: Provider) -> None:
        super().__init__()
        self.provider = provider
        self.last_images: list[FoundImage] = []
        """The images of the latest request the rules passed, for a `respond` that reads them."""
        self.broken: list[BrokenRule] = []
        """Every request refused for a broken rule (a conformance test asserts this stays empty)."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.provider.path_prefix}"

    def _step_for(self, request: dict[str, Any], authorization: str, path: str) -> Step:
        if path != f"{self.provider.path_prefix}/chat/completions":
            return refused(Refusal(404, {"error": {"message": f"no route {path}", "type": "not_found"}}))
        refusal = self.provider.rules(request)
        if refusal is None:
            self.last_images = openai_chat_images(request)
        if refusal is not None:
            with self._count_lock:
                self.broken.append(BrokenRule(len(self.requests), refusal.message))
            return refused(refusal)
        return super()._step_for(request, authorization, path)

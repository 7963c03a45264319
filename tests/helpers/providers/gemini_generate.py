"""Google's Gemini API `generateContent` (`POST /v1beta/models/{model}:generateContent`) on loopback, applying the
rules Google documents:

- https://ai.google.dev/gemini-api/docs/thought-signatures: Gemini 3 signs the first `functionCall` part of each
  step (in a parallel call only the first part carries a `thoughtSignature`); every signed step of the current
  turn (since the last user message that is not function responses) must come back with its signature
  unchanged, or the request is refused (`Function call is missing a thought_signature in functionCall parts`);
  the documented placeholder `skip_thought_signature_validator` is accepted in place of a signature (and counted
  in `degraded`: it "will negatively impact model performance"); a signature that is not the one given for
  that call is refused as corrupted.
- https://ai.google.dev/gemini-api/docs/function-calling: a function call turn is answered by as many function
  response parts as it had function call parts.
- https://ai.google.dev/api/generate-content: the response (`candidates`, `finishReason` `STOP`, `MAX_TOKENS`,
  `SAFETY`, `MALFORMED_FUNCTION_CALL`; a blocked candidate has no content), `usageMetadata`.
- https://ai.google.dev/gemini-api/docs/troubleshooting: the error body
  (`{"error": {"code", "message", "status"}}`), `RESOURCE_EXHAUSTED` with `google.rpc.RetryInfo.retryDelay`.
"""

from __future__ import annotations

import base64
import json
import threading
from typing import Any

from tests.helpers.providers.image_rules import GEMINI_RULES, check_images, gemini_images
from tests.helpers.providers.loopback import Fault, LoopbackProvider, ProviderRuleBroken, Turn, sign, tool_call_of

MISSING_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, function "
    "call `default_api:{name}` , position {position}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
PLACEHOLDER = base64.b64encode(b"skip_thought_signature_validator").decode()
STATUSES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}
CONTEXT_OVERFLOW = "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."


def _function_call(part: dict[str, Any]) -> dict[str, Any] | None:
    return part.get("functionCall") or part.get("function_call")


def _signature(part: dict[str, Any]) -> str | None:
    return part.get("thoughtSignature") or part.get("thought_signature")


def _call_text(call: dict[str, Any]) -> str:
    return json.dumps([call.get("name"), call.get("args") or {}], sort_keys=True)


class GeminiGenerateContent(LoopbackProvider):
    path_suffix = ":generateContent"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._minted: dict[str, str] = {}
        self._minted_lock = threading.Lock()

    def model_turns(self, body: dict[str, Any]) -> int:
        return sum(1 for content in body.get("contents", []) if content.get("role") == "model")

    def check(self, body: dict[str, Any]) -> None:
        contents = body.get("contents") or []
        current = _current_turn_start(contents)
        for index, content in enumerate(contents):
            parts = content.get("parts") or []
            calls = [part for part in parts if _function_call(part)]
            for part in calls:
                self._check_signature_is_ours(index, part)
            if calls and index >= current and not _signature(calls[0]):
                name = _function_call(calls[0]).get("name", "")  # type: ignore[union-attr]
                raise ProviderRuleBroken(MISSING_SIGNATURE.format(name=name, position=index + 1))
            if calls:
                self._check_responses(index, len(calls), contents)
        self.last_images = gemini_images(body)
        check_images(self.last_images, GEMINI_RULES, "gemini")

    def _check_signature_is_ours(self, index: int, part: dict[str, Any]) -> None:
        signature = _signature(part)
        if signature is None:
            return
        if signature == PLACEHOLDER:
            self.degraded.append(f"request {len(self.requests)}: contents.{index}")
            return
        with self._minted_lock:
            signed = self._minted.get(signature)
        if signed != _call_text(_function_call(part) or {}):
            raise ProviderRuleBroken("Corrupted thought signature.")

    @staticmethod
    def _check_responses(index: int, calls: int, contents: list[dict[str, Any]]) -> None:
        if index + 1 >= len(contents):
            return
        parts = contents[index + 1].get("parts") or []
        responses = sum(1 for part in parts if part.get("functionResponse") or part.get("function_response"))
        if responses != calls:
            raise ProviderRuleBroken(
                "Please ensure that the number of function response parts is equal to the number of function call "
                "parts of the function call turn."
            )

    def answer(self, body: dict[str, Any], turn: Turn, path: str) -> dict[str, Any]:
        model = path.split("/models/")[-1].split(":")[0]
        candidate: dict[str, Any] = {"index": 0, "finishReason": {"length": "MAX_TOKENS"}.get(turn.finish, "STOP")}
        if turn.finish == "safety":
            candidate["finishReason"] = "SAFETY"
            candidate["safetyRatings"] = [
                {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}
            ]
        elif turn.arguments is not None:
            candidate["finishReason"] = "MALFORMED_FUNCTION_CALL"
            candidate["finishMessage"] = f"Malformed function call: {turn.arguments}"
        else:
            candidate["content"] = {"role": "model", "parts": self._parts(turn)}
        return {
            "candidates": [candidate],
            "usageMetadata": {
                "promptTokenCount": 120,
                "candidatesTokenCount": 30,
                "totalTokenCount": 160,
                "thoughtsTokenCount": 10,
            },
            "modelVersion": model,
            "responseId": f"loopback-{len(self.requests)}",
        }

    def _parts(self, turn: Turn) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = [{"text": turn.thinking, "thought": True}]
        if turn.text:
            parts.append({"text": turn.text})
        for number, command in enumerate(turn.commands):
            name, arguments = tool_call_of(command)
            call = {"name": name, "args": arguments}
            part: dict[str, Any] = {"functionCall": call}
            if number == 0:
                signature = sign(self.secret, _call_text(call), str(len(self.requests)))
                with self._minted_lock:
                    self._minted[signature] = _call_text(call)
                part["thoughtSignature"] = signature
            parts.append(part)
        return parts

    def error_body(self, fault: Fault) -> dict[str, Any]:
        error: dict[str, Any] = {
            "code": fault.status,
            "message": fault.message,
            "status": STATUSES.get(fault.status, "UNKNOWN"),
        }
        if fault.details:
            error["details"] = list(fault.details)
        return {"error": error}


def _current_turn_start(contents: list[dict[str, Any]]) -> int:
    """The index of the last user content that is not function responses (the current turn starts there)."""
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        parts = content.get("parts") or []
        responses = any(part.get("functionResponse") or part.get("function_response") for part in parts)
        if content.get("role") == "user" and not responses:
            return index
    return 0

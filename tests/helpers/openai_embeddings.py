"""A loopback fake of an OpenAI-compatible embeddings endpoint, answering `POST /v1/embeddings` in the documented
shape (https://platform.openai.com/docs/api-reference/embeddings/create): `{"object": "list", "data":
[{"object": "embedding", "index", "embedding"}], "model", "usage": {"prompt_tokens", "total_tokens"}}`, floats or
base64 by `encoding_format`, a 400 `{"error": {...}}` for an input list that is empty or not strings.

Its vectors are bags of words hashed into DIMENSIONS (a fake: what is checked is what the back end sends and
ranks); `reply` may be replaced to answer otherwise."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.helpers.loopback_server import LoopbackServer

DIMENSIONS = 64


def bag_of_words(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"\w+", text.casefold()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMENSIONS] += 1.0
    return vector


class FakeEmbeddings(LoopbackServer):
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply: Callable[[dict[str, Any]], tuple[int, Any]] = self.embed
        super().__init__()

    def embed(self, body: dict[str, Any]) -> tuple[int, Any]:
        inputs = body.get("input")
        if not isinstance(inputs, list) or not inputs or not all(isinstance(text, str) for text in inputs):
            error = {"message": "'input' must be a non-empty list of strings", "type": "invalid_request_error"}
            return 400, {"error": error | {"param": "input", "code": None}}
        base64_wanted = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(inputs):
            vector: Any = bag_of_words(text)
            if base64_wanted:
                vector = base64.b64encode(struct.pack(f"<{DIMENSIONS}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": vector})
        tokens = sum(len(text.split()) for text in inputs)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                fake.requests.append(body)
                status, answer = fake.reply(body) if self.path == "/v1/embeddings" else (404, {"error": {}})
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

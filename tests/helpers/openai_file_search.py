"""A loopback fake of OpenAI's Files and Vector Stores API, for the File Search back end driven through the
official SDK (harness/inputs/retrieval/file_search.py). It answers in the documented shapes:

- https://platform.openai.com/docs/api-reference/files/create, /files/delete: the File object (`file-...`);
- https://platform.openai.com/docs/api-reference/vector-stores/create, /list, /retrieve, /delete: the vector store
  object (`vs_...`, `file_counts`, `usage_bytes`, `metadata`), lists as `{"object": "list", "data", "first_id",
  "last_id", "has_more"}` paged by `limit` and `after`, newest first unless `order=asc`;
- https://platform.openai.com/docs/api-reference/vector-stores-files/createFile, /getFile, /listFiles: the vector
  store file (`status` in_progress, then completed or failed with `last_error`), polled by the SDK at the
  `openai-poll-after-ms` the reply names;
- https://platform.openai.com/docs/api-reference/vector-stores/search: `vector_store.search_results.page` with
  `search_query` and `data` items `{file_id, filename, score, attributes, content: [{type: text, text}]}`,
  `max_num_results` from 1 to 50 (else a 400), `filters` as a comparison on an attribute (`eq`);
- https://platform.openai.com/docs/guides/error-codes: errors as `{"error": {"message", "type", "param", "code"}}`
  (401 for a bad key, 404 for an unknown id, 400 for a bad parameter).

Its chunking is the requested static windows over whitespace words, its ranking the count of the query's words a
chunk holds (a fake: what is checked is what our back end sends and reads)."""

from __future__ import annotations

import itertools
import json
import time
from email.parser import BytesParser
from email.policy import default
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

from tests.helpers.loopback_server import LoopbackServer

_KEY = "sk-file-search"


class FakeFileSearch(LoopbackServer):
    def __init__(self, page_size: int = 100) -> None:
        self.page_size = page_size
        """The most items a list page holds whatever `limit` asks (to make the SDK turn pages)."""
        self.requests: list[tuple[str, str, Any]] = []
        """(method, path without /v1, JSON body or the upload's form fields) of each request, in order."""
        self.files: dict[str, dict[str, Any]] = {}
        self.contents: dict[str, str] = {}
        self.stores: dict[str, dict[str, Any]] = {}
        self.attached: dict[str, dict[str, dict[str, Any]]] = {}
        self.polls_before_done = 1
        self.fail_processing: set[str] = set()
        """File names whose processing fails (`last_error` server_error)."""
        self._ids = itertools.count(1)
        super().__init__()

    @property
    def key(self) -> str:
        return _KEY

    def add_store(self, name: str, metadata: dict[str, str] | None = None) -> str:
        """A store made by someone else (for the list to hold more than ours)."""
        store_id = f"vs_{next(self._ids)}"
        self.stores[store_id] = _store(store_id, name, metadata or {})
        self.attached[store_id] = {}
        return store_id

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def do_DELETE(self) -> None:
                self._answer("DELETE")

            def _answer(self, method: str) -> None:
                url = urlparse(self.path)
                path = url.path.removeprefix("/v1")
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                kind = self.headers.get("Content-Type", "")
                body = _form(kind, raw) if kind.startswith("multipart/") else (json.loads(raw) if raw else None)
                with fake._lock:
                    fake.requests.append((method, path, body))
                    if self.headers.get("Authorization") != f"Bearer {_KEY}":
                        status, reply, headers = 401, _error("Incorrect API key provided.", "invalid_api_key"), {}
                    else:
                        status, reply, headers = fake._route(method, path, parse_qs(url.query), body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def _route(self, method: str, path: str, query: dict[str, list[str]], body: Any) -> tuple[int, Any, dict]:
        parts = path.strip("/").split("/")
        if parts == ["files"] and method == "POST":
            return self._upload(body)
        if parts[0] == "files" and len(parts) == 2 and method == "DELETE":
            if self.files.pop(parts[1], None) is None:
                return _missing("file", parts[1])
            return 200, {"id": parts[1], "object": "file", "deleted": True}, {}
        if parts[0] != "vector_stores":
            return 404, _error(f"Unknown path {path}", None), {}
        if len(parts) == 1:
            if method == "POST":
                store_id = self.add_store(body.get("name", ""), body.get("metadata"))
                self.stores[store_id]["chunking"] = body.get("chunking_strategy")
                return 200, self.stores[store_id], {}
            return 200, self._page(list(self.stores.values()), query), {}
        store = self.stores.get(parts[1])
        if store is None:
            return _missing("vector store", parts[1])
        if len(parts) == 2:
            if method == "DELETE":
                del self.stores[parts[1]]
                return 200, {"id": parts[1], "object": "vector_store.deleted", "deleted": True}, {}
            return 200, store, {}
        if parts[2] == "search":
            return self._search(parts[1], body)
        if parts[2] == "files" and len(parts) == 3:
            if method == "POST":
                return self._attach(parts[1], body)
            return 200, self._page(list(self.attached[parts[1]].values()), query), {}
        attached = self.attached[parts[1]].get(parts[3])
        if attached is None:
            return _missing("file", parts[3])
        if attached["status"] == "in_progress":
            attached["_polls"] -= 1
            if attached["_polls"] < 0:
                failed = self.files[parts[3]]["filename"] in self.fail_processing
                attached["status"] = "failed" if failed else "completed"
                if failed:
                    attached["last_error"] = {"code": "server_error", "message": "The file could not be parsed."}
                else:
                    store["file_counts"]["completed"] += 1
                    store["usage_bytes"] += attached["usage_bytes"]
        return 200, _public(attached), {"openai-poll-after-ms": "5"}

    def _upload(self, form: dict[str, Any]) -> tuple[int, Any, dict]:
        name, data = form["file"]
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": name,
            "purpose": form.get("purpose"),
            "status": "processed",
        }
        self.contents[file_id] = data.decode("utf-8")
        return 200, self.files[file_id], {}

    def _attach(self, store_id: str, body: dict[str, Any]) -> tuple[int, Any, dict]:
        file_id = body["file_id"]
        if file_id not in self.files:
            return _missing("file", file_id)
        strategy = body.get("chunking_strategy") or {"type": "auto"}
        self.attached[store_id][file_id] = {
            "id": file_id,
            "object": "vector_store.file",
            "created_at": int(time.time()),
            "vector_store_id": store_id,
            "usage_bytes": self.files[file_id]["bytes"],
            "status": "in_progress",
            "last_error": None,
            "attributes": body.get("attributes") or {},
            "chunking_strategy": strategy,
            "_polls": self.polls_before_done,
        }
        self.stores[store_id]["file_counts"]["total"] += 1
        return 200, _public(self.attached[store_id][file_id]), {}

    def _search(self, store_id: str, body: dict[str, Any]) -> tuple[int, Any, dict]:
        limit = body.get("max_num_results", 10)
        if not isinstance(limit, int) or not 1 <= limit <= 50:
            return 400, _error("max_num_results must be between 1 and 50.", "invalid_value", "max_num_results"), {}
        words = set(str(body["query"]).lower().split())
        found = []
        only = body.get("filters")  # a comparison filter on an attribute (the documented `eq` form)
        for file_id, attached in self.attached[store_id].items():
            if only and attached["attributes"].get(only["key"]) != only["value"]:
                continue
            static = attached["chunking_strategy"].get(
                "static", {"max_chunk_size_tokens": 800, "chunk_overlap_tokens": 400}
            )
            tokens = self.contents[file_id].split()
            width, step = (
                static["max_chunk_size_tokens"],
                static["max_chunk_size_tokens"] - static["chunk_overlap_tokens"],
            )
            for start in range(0, max(1, len(tokens) - static["chunk_overlap_tokens"]), step):
                text = " ".join(tokens[start : start + width])
                score = sum(word in words for word in text.lower().split()) / max(1, len(words))
                found.append((-score, self.files[file_id]["filename"], start, file_id, text, attached))
        found.sort()
        data = [
            {
                "file_id": file_id,
                "filename": name,
                "score": -negative,
                "attributes": attached["attributes"],
                "content": [{"type": "text", "text": text}],
            }
            for negative, name, _, file_id, text, attached in found[:limit]
        ]
        page = {"object": "vector_store.search_results.page", "search_query": [body["query"]], "data": data}
        return 200, page | {"has_more": False, "next_page": None}, {}

    def _page(self, items: list[dict[str, Any]], query: dict[str, list[str]]) -> dict[str, Any]:
        if query.get("order", ["desc"])[0] == "desc":  # the documented default: newest first
            items = items[::-1]
        after = query.get("after", [None])[0]
        limit = min(int(query.get("limit", ["20"])[0]), self.page_size)
        ids = [item["id"] for item in items]
        start = ids.index(after) + 1 if after in ids else 0
        shown = [_public(item) for item in items[start : start + limit]]
        return {
            "object": "list",
            "data": shown,
            "first_id": shown[0]["id"] if shown else None,
            "last_id": shown[-1]["id"] if shown else None,
            "has_more": start + limit < len(items),
        }


def _store(store_id: str, name: str, metadata: dict[str, str]) -> dict[str, Any]:
    now = int(time.time())
    counts = {"in_progress": 0, "completed": 0, "failed": 0, "cancelled": 0, "total": 0}
    return {
        "id": store_id,
        "object": "vector_store",
        "created_at": now,
        "name": name,
        "usage_bytes": 0,
        "file_counts": counts,
        "status": "completed",
        "metadata": metadata,
        "last_active_at": now,
        "expires_after": None,
        "expires_at": None,
    }


def _public(item: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in item.items() if not name.startswith("_")}


def _error(message: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def _missing(what: str, item_id: str) -> tuple[int, Any, dict]:
    return 404, _error(f"No {what} found with id '{item_id}'.", None), {}


def _form(kind: str, raw: bytes) -> dict[str, Any]:
    """A multipart form's fields: text as text, a file as (its name, its bytes)."""
    message = BytesParser(policy=default).parsebytes(f"Content-Type: {kind}\r\n\r\n".encode() + raw)
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True) or b""
        fields[str(name)] = (part.get_filename(), data) if part.get_filename() else data.decode()
    return fields

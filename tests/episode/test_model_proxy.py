"""The model proxy an installed agent calls (harness/episode/proxy/): over a real unix socket and real HTTP, each
request, in OpenAI's or Anthropic's API, is one query step of the episode's model, recorded, and held to the
episode's budgets; nothing an agent sends becomes an error of ours."""

from __future__ import annotations

import json
import socket as sockets
from pathlib import Path
from typing import Any

import httpx
import pytest

from harness.core.status import Status
from harness.episode.budget import Budget
from harness.episode.proxy import ModelProxy
from harness.episode.proxy.server import MAX_CONNECTIONS, MAX_REQUEST_BYTES
from harness.episode.solvers.tools import BashTool
from harness.models.base import ModelError, ModelReply, action_reply, estimate_tokens
from harness.records.trajectory import TrajectoryWriter, read_trajectory

QUESTION = [{"role": "system", "content": "You answer."}, {"role": "user", "content": "How many?"}]
BASH_TOOL = {"type": "function", "function": {"name": "bash", "parameters": {}}}


class RecordingModel:
    """Runs `ls` for ever, keeping the conversation of each call."""

    name = "recording"
    context_window = None

    def __init__(self) -> None:
        self.calls: list[list[dict[str, Any]]] = []

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        return estimate_tokens(messages)

    def query(self, messages: list[dict[str, Any]], timeout_s: float) -> ModelReply:
        self.calls.append(messages)
        return action_reply("Looking.", "ls", "toolcall", f"call_{len(self.calls)}")


@pytest.fixture
def model() -> RecordingModel:
    return RecordingModel()


@pytest.fixture
def proxy(tmp_path: Path, model: RecordingModel):
    """A proxy on a socket in TMP_PATH, for an episode of 2 turns whose model is offered bash."""
    log = TrajectoryWriter(tmp_path / "episode.jsonl")
    budget = Budget(max_turns=2, time_limit_s=60, context_window=None, output_reserve=0)
    with ModelProxy(tmp_path / "api.sock", model, budget, log, [BashTool()]) as served:
        yield served
    log.close()


@pytest.fixture
def client(proxy: ModelProxy, tmp_path: Path):
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(tmp_path / "api.sock")), base_url="http://proxy") as made:
        yield made


def calls_logged(tmp_path: Path) -> list[dict[str, Any]]:
    return [event for event in read_trajectory(tmp_path / "episode.jsonl") if event["event"] == "model_call"]


def chat(client: httpx.Client, messages: list[dict[str, Any]]) -> httpx.Response:
    return client.post("/v1/chat/completions", json={"model": "any", "messages": messages, "tools": [BASH_TOOL]})


def test_a_chat_completion_call_is_answered_by_the_episodes_model_and_logged(client, proxy, tmp_path):
    response = chat(client, QUESTION)
    assert response.status_code == 200
    [choice] = response.json()["choices"]
    assert choice["message"]["tool_calls"][0]["function"] == {"name": "bash", "arguments": '{"command": "ls"}'}
    assert choice["finish_reason"] == "tool_calls"
    [call] = calls_logged(tmp_path)
    assert call["turn"] == 1 and call["messages"] == QUESTION


def test_an_anthropic_messages_call_is_the_same_call_of_the_model_in_its_api(client, model, tmp_path):
    first = {
        "model": "any",
        "max_tokens": 100,
        "system": "You answer.",
        "messages": [{"role": "user", "content": "How many?"}],
    }
    reply = client.post("/v1/messages", json=first | {"tools": [{"name": "bash", "input_schema": {}}]}).json()
    [tool_use] = reply["content"][1:]
    assert (reply["stop_reason"], tool_use["name"], tool_use["input"]) == ("tool_use", "bash", {"command": "ls"})
    result = {"type": "tool_result", "tool_use_id": tool_use["id"], "content": [{"type": "text", "text": "a.md"}]}
    turn = [{"role": "assistant", "content": reply["content"]}, {"role": "user", "content": [result]}]
    assert client.post("/v1/messages", json=first | {"messages": first["messages"] + turn}).status_code == 200
    assert model.calls[1][2:] == [  # the run's model is asked in its own form, as for any agent
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {
                    "id": tool_use["id"],
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": tool_use["id"], "content": "a.md"},
    ]
    assert [call["messages"] for call in calls_logged(tmp_path)][1] == turn_as_logged(tool_use["id"])


def turn_as_logged(call_id: str) -> list[dict[str, Any]]:
    return [{"role": "tool", "tool_call_id": call_id, "content": "a.md"}]


def test_a_streamed_chat_completion_is_read_by_openais_own_client(proxy, tmp_path):
    import openai

    http = httpx.Client(transport=httpx.HTTPTransport(uds=str(tmp_path / "api.sock")))
    client = openai.OpenAI(base_url="http://proxy/v1", api_key="none", http_client=http, max_retries=0)
    chunks = list(client.chat.completions.create(model="any", messages=QUESTION, tools=[BASH_TOOL], stream=True))
    [call] = [call for chunk in chunks for choice in chunk.choices for call in choice.delta.tool_calls or []]
    assert (call.function.name, call.function.arguments) == ("bash", '{"command": "ls"}')
    assert chunks[-1].choices[0].finish_reason == "tool_calls" and len(calls_logged(tmp_path)) == 1


def test_a_streamed_anthropic_message_is_read_by_litellms_anthropic_client(proxy, tmp_path):
    import litellm
    from litellm.llms.custom_httpx.http_handler import HTTPHandler

    handler = HTTPHandler(client=httpx.Client(transport=httpx.HTTPTransport(uds=str(tmp_path / "api.sock"))))
    tool = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
    question = dict(model="anthropic/any", api_base="http://proxy", api_key="none", messages=QUESTION, tools=[tool])
    chunks = list(litellm.completion(**question, stream=True, client=handler))
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
    calls = [call for chunk in chunks for call in chunk.choices[0].delta.tool_calls or []]
    assert text == "Looking." and "".join(call.function.arguments or "" for call in calls) == '{"command": "ls"}'
    assert [call.function.name for call in calls if call.function.name] == ["bash"]


@pytest.fixture
def gemini_client(model: RecordingModel, tmp_path: Path):
    """A proxy whose agent calls bash `run_shell_command` (Gemini CLI's name), and a client of it."""
    budget = Budget(max_turns=3, time_limit_s=60, context_window=None, output_reserve=0)
    log = TrajectoryWriter(tmp_path / "episode.jsonl")
    transport = httpx.HTTPTransport(uds=str(tmp_path / "api.sock"))
    aliases = {"run_shell_command": "bash"}
    with (
        ModelProxy(tmp_path / "api.sock", model, budget, log, [BashTool()], aliases),
        httpx.Client(transport=transport, base_url="http://proxy/v1beta/models") as client,
    ):
        yield client
    log.close()


GEMINI_FIRST = {
    "systemInstruction": {"parts": [{"text": "You answer."}]},
    "contents": [{"role": "user", "parts": [{"text": "How many?"}]}],
    "tools": [{"functionDeclarations": [{"name": "run_shell_command", "parametersJsonSchema": {}}]}],
    "generationConfig": {"temperature": 1},
}


def test_a_gemini_call_is_the_same_call_of_the_model_its_shell_tool_named_as_the_agent_names_it(
    gemini_client, model, tmp_path
):
    reply = gemini_client.post("/gemini-2.5-flash:generateContent", json=GEMINI_FIRST).json()
    [candidate] = reply["candidates"]
    text, call = candidate["content"]["parts"]
    assert text == {"text": "Looking."} and candidate["finishReason"] == "STOP"
    assert (call["functionCall"]["name"], call["functionCall"]["args"]) == ("run_shell_command", {"command": "ls"})
    thought = {"text": "I should look.", "thought": True}
    response = {"functionResponse": {"id": call["functionCall"]["id"], "name": "run_shell_command"}}
    response["functionResponse"]["response"] = {"output": "a.md"}
    turn = [{"role": "model", "parts": [thought, text, call]}, {"role": "user", "parts": [response]}]
    second = GEMINI_FIRST | {"contents": GEMINI_FIRST["contents"] + turn}
    streamed = gemini_client.post("/gemini-2.5-flash:streamGenerateContent?alt=sse", json=second)
    assert streamed.headers["content-type"] == "text/event-stream"
    [event] = [json.loads(line[6:]) for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert event["candidates"][0]["content"]["parts"][1]["functionCall"]["name"] == "run_shell_command"
    assert model.calls[1] == [  # the run's model is asked in its own form, its tool under its own name
        *QUESTION,
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {
                    "id": call["functionCall"]["id"],
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call["functionCall"]["id"], "content": "a.md"},
    ]
    assert [call["messages"] for call in calls_logged(tmp_path)][1] == turn_as_logged(call["functionCall"]["id"])
    actions = [event["command"] for event in read_trajectory(tmp_path / "episode.jsonl") if event["event"] == "action"]
    assert actions == ["ls", "ls"]


def test_a_gemini_agents_other_tools_and_images_are_refused_to_it(gemini_client, model):
    tools = [{"functionDeclarations": [{"name": "run_shell_command"}, {"name": "write_file"}]}]
    image = {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": ""}}]}
    other_tool = gemini_client.post("/m:generateContent", json=GEMINI_FIRST | {"tools": tools})
    an_image = gemini_client.post("/m:generateContent", json=GEMINI_FIRST | {"contents": [image]})
    assert (other_tool.status_code, an_image.status_code) == (400, 400) and not model.calls
    assert "write_file" in other_tool.json()["error"]["message"]
    assert "'contents[0]'.parts[0]" in an_image.json()["error"]["message"]
    assert gemini_client.post("/m:countTokens", json=GEMINI_FIRST).status_code == 404


@pytest.mark.parametrize("role", [["user"], {"user": 1}, 7, None])
def test_a_gemini_content_whose_role_is_not_a_name_is_refused_naming_it(gemini_client, model, role):
    """Found by fuzzing the three readers with random JSON: a role that is a list or an object was looked up in a
    set of names and raised (unhashable), our error; it is the agent's, refused as any other malformed field."""
    content = {"role": role, "parts": [{"text": "How many units?"}]}
    refused = gemini_client.post("/m:generateContent", json=GEMINI_FIRST | {"contents": [content]})
    assert refused.status_code == 400 and not model.calls
    assert "'contents[0]': a content with a role of user or model" in refused.json()["error"]["message"]


def test_each_call_logs_only_the_messages_new_since_the_last(client, tmp_path):
    first = chat(client, QUESTION).json()["choices"][0]["message"]
    observation = {"role": "tool", "tool_call_id": first["tool_calls"][0]["id"], "content": "ledger.md"}
    assert chat(client, [*QUESTION, first, observation]).status_code == 200
    assert [call["messages"] for call in calls_logged(tmp_path)] == [QUESTION, [observation]]


def test_the_commands_asked_for_and_the_results_sent_back_are_logged_as_our_agents_are(client, tmp_path):
    first = chat(client, QUESTION).json()["choices"][0]["message"]
    observation = {"role": "tool", "tool_call_id": first["tool_calls"][0]["id"], "content": "ledger.md"}
    chat(client, [*QUESTION, first, observation])
    events = [event for event in read_trajectory(tmp_path / "episode.jsonl")]
    assert [(event["event"], event["turn"]) for event in events] == [
        ("model_call", 1),
        ("action", 1),
        ("observation", 1),
        ("model_call", 2),
        ("action", 2),
    ]
    assert events[1]["command"] == "ls" and events[2]["text"] == "ledger.md"


def test_the_call_past_the_turn_budget_is_refused_and_ends_the_episode_as_turn_limit(client, proxy, tmp_path):
    assert [chat(client, QUESTION).status_code for _ in range(2)] == [200, 200]
    refused = chat(client, QUESTION)
    assert refused.status_code == 403 and "turn_limit" in refused.json()["error"]["message"]
    assert proxy.ended is not None and proxy.ended.status is Status.TURN_LIMIT
    assert chat(client, QUESTION).status_code == 403  # and every call after it
    assert len(calls_logged(tmp_path)) == 2


class FailingProvider(RecordingModel):
    def query(self, messages: list[dict[str, Any]], timeout_s: float) -> ModelReply:
        raise ModelError("Incorrect API key provided: sk-...wxyz (https://provider.internal/v1)")


def test_a_provider_that_fails_ends_the_episode_as_model_error_and_the_agent_is_refused(tmp_path):
    log = TrajectoryWriter(tmp_path / "t.jsonl")
    budget = Budget(max_turns=5, time_limit_s=60, context_window=None, output_reserve=0)
    with (
        ModelProxy(tmp_path / "api.sock", FailingProvider(), budget, log, [BashTool()]) as proxy,
        httpx.Client(transport=httpx.HTTPTransport(uds=str(tmp_path / "api.sock")), base_url="http://p") as client,
    ):
        refused = chat(client, QUESTION)
    said = refused.json()["error"]["message"]
    assert refused.status_code == 403 and "model_error" in said and "wxyz" not in said and "internal" not in said
    assert proxy.ended is not None and proxy.ended.status is Status.MODEL_ERROR
    assert [event["event"] for event in read_trajectory(tmp_path / "t.jsonl")] == ["model_error"]


def test_a_call_after_the_agents_time_is_out_is_refused_as_time_limit(model, tmp_path):
    budget = Budget(max_turns=5, time_limit_s=0.0, context_window=None, output_reserve=0)
    with (
        ModelProxy(tmp_path / "api.sock", model, budget, TrajectoryWriter(tmp_path / "t.jsonl"), [BashTool()]) as proxy,
        httpx.Client(transport=httpx.HTTPTransport(uds=str(tmp_path / "api.sock")), base_url="http://p") as client,
    ):
        assert chat(client, QUESTION).status_code == 403
    assert proxy.ended is not None and proxy.ended.status is Status.TIME_LIMIT and not model.calls


class PricedModel(RecordingModel):
    """Each call costs 0.004 USD."""

    def query(self, messages: list[dict[str, Any]], timeout_s: float) -> ModelReply:
        return super().query(messages, timeout_s).model_copy(update={"cost_usd": 0.004})


def test_the_call_past_the_episodes_cost_cap_is_refused_and_ends_the_episode_as_cost_limit(tmp_path):
    model = PricedModel()
    budget = Budget(max_turns=50, time_limit_s=60, context_window=None, output_reserve=0, cost_limit_usd=0.01)
    with (
        ModelProxy(tmp_path / "api.sock", model, budget, TrajectoryWriter(tmp_path / "t.jsonl"), [BashTool()]) as proxy,
        httpx.Client(transport=httpx.HTTPTransport(uds=str(tmp_path / "api.sock")), base_url="http://p") as client,
    ):
        answered = [chat(client, QUESTION).status_code for _ in range(3)]  # 0.004, 0.008, 0.012: the cap is passed
        refused = chat(client, QUESTION)
        assert answered == [200, 200, 200] and chat(client, QUESTION).status_code == 403
    assert refused.status_code == 403 and "cost_limit" in refused.json()["error"]["message"]
    assert proxy.ended is not None and proxy.ended.status is Status.COST_LIMIT and len(model.calls) == 3
    assert budget.spend().cost_usd == pytest.approx(0.012)


@pytest.mark.parametrize(
    ("path", "body", "named"),
    [
        ("/v1/chat/completions", b"{not json", "not JSON"),
        ("/v1/chat/completions", json.dumps({"messages": []}).encode(), "'messages'"),
        ("/v1/chat/completions", json.dumps({"messages": [{"role": "wizard"}]}).encode(), "'messages[0]'"),
        ("/v1/chat/completions", json.dumps({"messages": QUESTION, "stream": "yes"}).encode(), "'stream'"),
        (
            "/v1/chat/completions",
            json.dumps({"messages": QUESTION, "tools": [{"function": {"name": "rm"}}]}).encode(),
            "rm",
        ),
        (
            "/v1/messages",
            json.dumps({"messages": [{"role": "user", "content": [{"type": "image"}]}]}).encode(),
            "content[0]",
        ),
    ],
)
def test_a_request_that_is_not_a_call_of_the_runs_model_is_refused_to_the_agent(
    client, proxy, tmp_path, path, body, named
):
    response = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and named in json.dumps(response.json())
    assert proxy.ended is None and not calls_logged(tmp_path)


def test_only_the_apis_paths_are_served(client):
    assert client.get("/v1/models").status_code == 404
    assert client.post("/v1/embeddings", json={}).status_code == 404


def test_a_request_longer_than_the_cap_is_refused_before_it_is_read(proxy, tmp_path):
    with sockets.socket(sockets.AF_UNIX) as connection:
        connection.settimeout(10)
        connection.connect(str(tmp_path / "api.sock"))
        length = MAX_REQUEST_BYTES + 1
        connection.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: {length}\r\n\r\n".encode())
        assert connection.recv(100).startswith(b"HTTP/1.0 413")
    assert proxy.ended is None and not calls_logged(tmp_path)


def test_connections_past_the_cap_are_closed_without_a_thread_of_ours(proxy, tmp_path):
    held = [sockets.socket(sockets.AF_UNIX) for _ in range(MAX_CONNECTIONS + 1)]
    try:
        for connection in held:
            connection.connect(str(tmp_path / "api.sock"))  # blocking: waits while the backlog is full
            connection.settimeout(10)
        assert held[-1].recv(1) == b""  # closed at once, while the others wait for their request
    finally:
        for connection in held:
            connection.close()


CLAUDE_CODE_FIRST = {  # the shape of Claude Code 2.1.337's first call (its own request, cut short)
    "model": "claude-sonnet-4-5",
    "max_tokens": 32000,
    "stream": True,
    "thinking": {"type": "adaptive", "display": "updates"},
    "output_config": {"effort": "high"},
    "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
    "system": [
        {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.337;"},
        {"type": "text", "text": "You answer.", "cache_control": {"type": "ephemeral"}},
    ],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "How many?"}]},
        {"role": "system", "content": [{"type": "text", "text": "# Environment"}]},
    ],
    "tools": [{"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}],
}


def test_claude_codes_call_is_the_same_call_of_the_model_its_bash_named_as_the_agent_names_it(model, tmp_path):
    budget = Budget(max_turns=3, time_limit_s=60, context_window=None, output_reserve=0)
    log = TrajectoryWriter(tmp_path / "episode.jsonl")
    transport = httpx.HTTPTransport(uds=str(tmp_path / "api.sock"))
    with (
        ModelProxy(tmp_path / "api.sock", model, budget, log, [BashTool()], {"Bash": "bash"}),
        httpx.Client(transport=transport, base_url="http://localhost") as client,
    ):
        first = client.post("/v1/messages?beta=true", json=CLAUDE_CODE_FIRST)
        events = [json.loads(line[6:]) for line in first.text.splitlines() if line.startswith("data: ")]
        [use] = [event["content_block"] for event in events if event["type"] == "content_block_start"][1:]
        assert (use["type"], use["name"]) == ("tool_use", "Bash")
        result = {"type": "tool_result", "tool_use_id": use["id"], "content": "a.md", "is_error": False}
        said = {"type": "tool_use", "id": use["id"], "name": "Bash", "input": {"command": "ls"}}
        turn = [
            {"role": "assistant", "content": [{"type": "text", "text": "Looking."}, said]},
            {"role": "user", "content": [result | {"cache_control": {"type": "ephemeral"}}]},
        ]
        second = CLAUDE_CODE_FIRST | {"messages": CLAUDE_CODE_FIRST["messages"] + turn}
        assert client.post("/v1/messages?beta=true", json=second).status_code == 200
        other = CLAUDE_CODE_FIRST | {"tools": [*CLAUDE_CODE_FIRST["tools"], {"name": "WebFetch", "input_schema": {}}]}
        refused = client.post("/v1/messages?beta=true", json=other)
    log.close()
    assert refused.status_code == 400 and "WebFetch" in refused.json()["error"]["message"]
    assert model.calls[1] == [  # the run's model asked in its own form: the system's text, its bash as bash
        {"role": "system", "content": "x-anthropic-billing-header: cc_version=2.1.337;You answer."},
        {"role": "user", "content": "How many?"},
        {"role": "system", "content": "# Environment"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {"id": use["id"], "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": use["id"], "content": "a.md"},
    ]

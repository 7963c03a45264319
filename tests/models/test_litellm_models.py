"""Real litellm client code over real HTTP against the local OpenAI-compatible test server."""

from __future__ import annotations

import json

import pytest
import yaml

from harness.core.errors import InputError
from harness.episode.budget import estimate_tokens
from harness.models.aliases import ModelAlias, parse_model_args, resolve_model
from harness.models.litellm_model import LiteLLMModel, ProviderSettings
from tests.helpers.openai_server import CONTEXT_OVERFLOW, fault, malformed, reply

pytestmark = pytest.mark.usefixtures("openai_key")


def provider_run(mini, server, *extra: str, model: str = "openai/test-model"):
    """One attempt per episode (`--retry-errors 0`): these tests are about the provider call's own retries."""
    return mini.run("--model", model, "--api-base", server.url, "--retry-errors", "0", *extra)


def test_toolcall_episode_through_litellm(mini, openai_server):
    openai_server.push(
        reply(bash="cat documents/ledger.md", cached_tokens=100, reasoning_tokens=12),
        reply("40 + 2 = <answer>42</answer>"),
    )
    outcome = provider_run(mini, openai_server)
    [row] = outcome.rows
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", 2)
    assert (row["input_tokens"], row["output_tokens"]) == (240, 60)
    assert (row["cached_tokens"], row["reasoning_tokens"]) == (100, 12)
    assert row["cost_usd"] is None  # no price is known for openai/test-model
    first, second = openai_server.requests
    assert first["temperature"] == 1.0
    assert first["tools"][0]["function"]["name"] == "bash"
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and "| 2020 | 40 |" in tool_message["content"]
    assert "replies and" in tool_message["content"]
    call = next(e for e in outcome.trajectory("t1") if e["event"] == "model_call")
    assert call["response"]["usage"]["cached_tokens"] == 100 and call["latency_s"] >= 0


def test_text_action_format_sends_no_tools_and_runs_the_fenced_block(mini, openai_server):
    openai_server.push(reply("Let me look.\n```bash\ncat documents/ledger.md\n```"), reply("<answer>42</answer>"))
    [row] = provider_run(mini, openai_server, "--action-format", "text").rows
    assert (row["status"], row["verdict"]) == ("answered", "correct")
    first, second = openai_server.requests
    assert "tools" not in first
    assert second["messages"][-1]["role"] == "user" and "| 2021 | 2 |" in second["messages"][-1]["content"]


def test_rate_limit_is_retried_after_the_servers_retry_after(mini, openai_server):
    openai_server.push(fault(429, "slow down", {"Retry-After": "1"}), reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server)
    [row] = outcome.rows
    assert row["status"] == "answered" and len(openai_server.requests) == 2
    call = next(e for e in outcome.trajectory("t1") if e["event"] == "model_call")
    [attempt] = call["response"]["attempts"]
    assert (attempt["status"], attempt["wait_s"], attempt["error"]) == (429, 1.0, "RateLimitError")


def test_server_errors_are_retried_with_backoff(mini, openai_server):
    openai_server.push(fault(500, "boom"), fault(503, "busy"), reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server)
    assert outcome.rows[0]["status"] == "answered"
    attempts = next(e for e in outcome.trajectory("t1") if e["event"] == "model_call")["response"]["attempts"]
    assert [a["status"] for a in attempts] == [500, 503]
    assert attempts[1]["wait_s"] >= attempts[0]["wait_s"] >= 1


def test_retries_run_out_into_model_error(mini, openai_server):
    openai_server.push(fault(500, "boom"), fault(500, "boom"), fault(500, "boom"), reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server, "--max-retries", "1")
    [row] = outcome.rows
    assert row["status"] == "model_error" and "500" in row["detail"]
    assert len(openai_server.requests) == 2
    assert any(e["event"] == "model_error" for e in outcome.trajectory("t1"))


def test_slow_reply_times_out_and_is_retried(mini, openai_server):
    slow = reply("<answer>1</answer>")
    slow.delay_s = 3
    openai_server.push(slow, reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server, "--model-timeout", "1.5", "--max-retries", "0")
    assert outcome.rows[0]["status"] == "model_error"
    assert "Timeout" in outcome.rows[0]["detail"]


def test_a_timed_out_call_is_retried_within_the_call_budget(mini, openai_server):
    slow = reply("<answer>1</answer>")
    slow.delay_s = 2
    openai_server.push(slow, reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server, "--model-timeout", "20", "--max-retries", "2", "--time-limit", "20")
    # The first call gets the whole budget, so the slow reply is simply waited for.
    assert (outcome.rows[0]["status"], outcome.rows[0]["answer"]) == ("answered", "1")


@pytest.mark.parametrize(
    ("status", "error"), [(401, "AuthenticationError"), (400, "BadRequestError"), (404, "NotFound")]
)
def test_client_errors_fail_at_once(mini, openai_server, status, error):
    openai_server.push(fault(status, "no"), reply("<answer>42</answer>"))
    [row] = provider_run(mini, openai_server).rows
    assert row["status"] == "model_error" and error in row["detail"] and str(status) in row["detail"]
    assert len(openai_server.requests) == 1


def test_context_overflow_from_the_provider_ends_as_context_limit_without_retry(mini, openai_server):
    openai_server.push(CONTEXT_OVERFLOW, reply("<answer>42</answer>"))
    [row] = provider_run(mini, openai_server).rows
    assert row["status"] == "context_limit"
    assert len(openai_server.requests) == 1


def test_context_budget_is_checked_before_the_call(mini, openai_server):
    openai_server.push(reply("<answer>42</answer>"))
    [row] = provider_run(mini, openai_server, "--context-window", "300").rows
    assert (row["status"], row["turns"]) == ("context_limit", 0)
    assert openai_server.requests == []


def test_known_model_gets_a_cost_from_the_bundled_price_map(mini, openai_server):
    openai_server.push(reply("<answer>42</answer>"))
    [row] = provider_run(mini, openai_server, model="openai/gpt-5").rows
    assert row["cost_usd"] is not None and row["cost_usd"] > 0


def test_model_args_temperature_and_api_key_env_reach_the_provider(mini, openai_server, monkeypatch):
    monkeypatch.setenv("MY_TEST_KEY", "sk-from-my-var")
    openai_server.push(reply("<answer>42</answer>"))
    provider_run(
        mini,
        openai_server,
        "--model-arg",
        "top_p=0.5",
        "--model-arg",
        "seed=7",
        "--temperature",
        "0.2",
        "--api-key-env",
        "MY_TEST_KEY",
    )
    [request] = openai_server.requests
    assert (request["top_p"], request["seed"], request["temperature"]) == (0.5, 7, 0.2)


def test_missing_api_key_variable_is_an_input_error(mini, openai_server):
    outcome = provider_run(mini, openai_server, "--api-key-env", "NO_SUCH_KEY_VARIABLE")
    assert outcome.exit_code == 2 and "NO_SUCH_KEY_VARIABLE" in outcome.output


def test_unknown_bare_model_name_says_how_to_write_one(mini):
    outcome = mini.run("--model", "mystery-model")
    assert outcome.exit_code == 2 and "provider/model" in outcome.output


def test_aliases_resolve_to_litellm_strings():
    assert resolve_model("deepseek-v4", {}).model == "deepseek/deepseek-v4-pro"
    assert resolve_model("mine", {"mine": "hosted_vllm/qwen3"}) == ModelAlias("hosted_vllm/qwen3")
    assert resolve_model("anthropic/claude-x", {}) == ModelAlias("anthropic/claude-x")
    with pytest.raises(InputError, match="provider/model"):
        resolve_model("deepseek", {})


PUBLISHED = {
    "gpt-5.5": ("openai/gpt-5.5", {"reasoning_effort": "xhigh"}),
    "gemini-3.1-pro": ("gemini/gemini-3.1-pro-preview", {"reasoning_effort": "high"}),
    "gemini-3.1-flash-lite": ("gemini/gemini-3.1-flash-lite", {"reasoning_effort": "high"}),
    "deepseek-v4-flash": ("deepseek/deepseek-v4-flash", {"thinking": {"type": "enabled"}, "reasoning_effort": "max"}),
    "deepseek-v4-pro": ("deepseek/deepseek-v4-pro", {"thinking": {"type": "enabled"}, "reasoning_effort": "max"}),
    "glm-5.1": ("zai/glm-5.1", {"thinking": {"type": "enabled"}}),
    "qwen3.5-35b-a3b": ("hosted_vllm/Qwen/Qwen3.5-35B-A3B", {"chat_template_kwargs": {"enable_thinking": True}}),
    "qwen3.5-9b": ("hosted_vllm/Qwen/Qwen3.5-9B", {"chat_template_kwargs": {"enable_thinking": True}}),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_each_published_model_has_an_alias_with_its_maximum_reasoning(name):
    alias = resolve_model(name, {})
    assert (alias.model, alias.args) == PUBLISHED[name]
    assert alias.api_base_required == alias.model.startswith("hosted_vllm/")


@pytest.mark.parametrize("name", ["gemini-3.1-pro", "gemini-3.1-flash-lite"])
def test_gemini_aliases_ask_for_the_highest_thinking_level(name):
    """Gemini's own API is not OpenAI-compatible, so the test server cannot take it: check litellm's mapping."""
    from litellm.utils import get_optional_params

    alias = resolve_model(name, {})
    provider, model = alias.model.split("/", 1)
    sent = get_optional_params(model=model, custom_llm_provider=provider, temperature=1.0, **alias.args)
    assert sent["thinkingConfig"]["thinkingLevel"] == "high" and sent["temperature"] == 1.0


def test_model_args_are_typed_yaml_scalars():
    assert parse_model_args(["reasoning_effort=high", "seed=7", "logprobs=true"]) == {
        "reasoning_effort": "high",
        "seed": 7,
        "logprobs": True,
    }
    with pytest.raises(InputError, match="key=value"):
        parse_model_args(["oops"])


def test_importing_the_harness_keeps_litellm_offline():
    import os

    import harness  # noqa: F401

    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


def test_missing_provider_key_fails_before_the_run(mini, openai_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    outcome = provider_run(mini, openai_server)
    assert outcome.exit_code == 2 and "OPENAI_API_KEY" in outcome.output
    assert openai_server.requests == []


def test_a_model_call_never_outlives_the_episode_clock(mini, openai_server):
    slow = reply("<answer>42</answer>")
    slow.delay_s = 6
    openai_server.push(slow, slow)
    [row] = provider_run(mini, openai_server, "--time-limit", "2").rows
    assert row["status"] == "time_limit"
    assert row["duration_s"] < 5


def test_provider_models_count_prompt_tokens_with_their_tokenizer_offline():
    from harness.episode.budget import estimate_tokens
    from harness.models.litellm_model import LiteLLMModel, ProviderSettings

    messages = [{"role": "user", "content": "hello world " * 1000}]
    counted = LiteLLMModel(ProviderSettings("openai/gpt-5"), 272000).count_tokens(messages)
    assert 1900 <= counted <= 2200  # "hello world " is two tokens
    assert estimate_tokens(messages) > 2900  # the 4-characters-per-token fallback would overcount by half


def test_the_budget_uses_the_models_counter():
    from harness.core.status import EpisodeFinished
    from harness.episode.budget import Budget

    messages = [{"role": "user", "content": "x" * 1400}]  # over the window's room at a token per byte: counted
    Budget(10, 60, 1500, 400, count_tokens=lambda m: 1000).check_before_call(messages)
    with pytest.raises(EpisodeFinished) as ended:
        Budget(10, 60, 1500, 600, count_tokens=lambda m: 1000).check_before_call(messages)
    assert ended.value.status.value == "context_limit"


@pytest.mark.parametrize(
    "model", ["openai/gpt-4o", "openai/gpt-3.5-turbo", "anthropic/claude-sonnet-4-5", "openai/local"]
)
def test_no_tokenizer_counts_more_than_the_budgets_bound(model):
    """The bound that spares the tokenizer (a token per byte of the messages' JSON) is above litellm's count for
    text that tokenizes worst: single characters of many scripts, emoji, digits, whitespace runs, a tool call."""
    from harness.episode.budget import most_tokens

    texts = [
        "a b c d e f g h",
        "\u00e9\u00e8\u00ea " * 50,
        "\u65e5\u672c\u8a9e\u306e\u6587\u7ae0" * 40,
        "\U0001f600\U0001f9ea\U0001f4c8" * 30,
        "0 1 2 3 4 5 6 7 8 9 " * 40,
        " \n\t" * 100,
        "",
        "\u0645\u0631\u062d\u0628\u0627 \u0928\u092e\u0938\u094d\u0924\u0947 " * 30,
    ]
    model_tools = LiteLLMModel(ProviderSettings(model), None)
    for text in texts:
        messages = [
            {"role": "system", "content": text},
            {"role": "user", "content": text},
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": text})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": text},
        ]
        bound = most_tokens(messages)
        assert bound is not None and bound >= model_tools.count_tokens(messages), (model, text[:20])


def test_a_batch_budgets_context_with_the_providers_tokenizer(mini, openai_server):
    """ "hello world " is 2 tokens per 12 characters: the provider's count fits the window, the 4-characters
    estimate (3 per 12) would not, so the episode only runs when the batch counts with the tokenizer."""
    task = json.loads((mini.tasks_dir / "mini.jsonl").read_text())
    task["question"] = "hello world " * 4000 + task["question"]
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    openai_server.push(reply("<answer>42</answer>"))
    [row] = provider_run(mini, openai_server, "--context-window", "10000", "--output-reserve", "0").rows
    assert (row["status"], row["turns"]) == ("answered", 1)
    [request] = openai_server.requests
    assert estimate_tokens(request["messages"]) > 12000
    assert LiteLLMModel(ProviderSettings("openai/test-model"), None).count_tokens(request["messages"]) < 9000


def test_negative_token_counts_from_the_provider_count_as_zero(mini, openai_server):
    """Negative counts would make the cost negative and so lift --max-cost; cached above prompt likewise."""
    openai_server.push(
        reply(
            bash="cat documents/ledger.md",
            prompt_tokens=-50_000,
            completion_tokens=-900,
            cached_tokens=-40_000,
            reasoning_tokens=-7,
        ),
        reply("<answer>42</answer>", prompt_tokens=100, cached_tokens=5_000),
    )
    [row] = provider_run(mini, openai_server, model="openai/gpt-5").rows
    assert row["status"] == "answered"
    assert (row["input_tokens"], row["output_tokens"], row["cached_tokens"], row["reasoning_tokens"]) == (
        100,
        30,
        100,
        0,
    )
    assert 0 < row["cost_usd"] < 0.001


@pytest.mark.parametrize(
    ("choices", "error"),
    [([], "MalformedResponse"), ([{"index": 0, "message": None, "finish_reason": "stop"}], "InternalServerError")],
)
def test_a_reply_without_a_message_is_retried_like_a_server_error(mini, openai_server, choices, error):
    openai_server.push(malformed(choices=choices), reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server)
    [row] = outcome.rows
    assert (row["status"], row["answer"]) == ("answered", "42")
    call = next(e for e in outcome.trajectory("t1") if e["event"] == "model_call")
    [attempt] = call["response"]["attempts"]
    assert attempt["error"] == error


def test_replies_without_choices_run_out_into_model_error(mini, openai_server):
    openai_server.push(malformed(choices=[]), malformed(choices=[]))
    [row] = provider_run(mini, openai_server, "--max-retries", "1").rows
    assert row["status"] == "model_error" and "no choices" in row["detail"]


def run_record(outcome) -> dict:
    return yaml.safe_load((outcome.run_dir / "run.yaml").read_text())


def test_gpt_5_5_alias_sends_the_maximum_reasoning_effort_through_the_responses_api(mini, openai_server):
    """litellm sends gpt-5.5 with tools and reasoning to /v1/responses; the test server answers it too."""
    openai_server.push(reply(bash="cat documents/ledger.md"), reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server, model="gpt-5.5")
    assert (outcome.rows[0]["status"], outcome.rows[0]["verdict"]) == ("answered", "correct")
    first, second = openai_server.requests
    assert (first["model"], first["reasoning"], first["temperature"]) == ("gpt-5.5", {"effort": "xhigh"}, 1.0)
    assert second["input"][-1]["type"] == "function_call_output"
    assert run_record(outcome)["model"] == {
        "model": "openai/gpt-5.5",
        "temperature": 1.0,
        "args": {"reasoning_effort": "xhigh"},
        "context_window": 1050000,
        "max_output_tokens": 128000,  # litellm's map: the reply cap every call sends
    }
    assert first["max_output_tokens"] == 128000  # the Responses API's name for it


@pytest.mark.parametrize(
    ("name", "key_variable", "sent"),
    [
        ("deepseek-v4-pro", "DEEPSEEK_API_KEY", {"thinking": {"type": "enabled"}, "reasoning_effort": "max"}),
        ("deepseek-v4-flash", "DEEPSEEK_API_KEY", {"thinking": {"type": "enabled"}, "reasoning_effort": "max"}),
        ("glm-5.1", "ZAI_API_KEY", {"thinking": {"type": "enabled"}}),
        ("qwen3.5-9b", "HOSTED_VLLM_API_KEY", {"chat_template_kwargs": {"enable_thinking": True}}),
        ("qwen3.5-35b-a3b", "HOSTED_VLLM_API_KEY", {"chat_template_kwargs": {"enable_thinking": True}}),
    ],
)
def test_published_aliases_send_their_reasoning_arguments(mini, openai_server, monkeypatch, name, key_variable, sent):
    monkeypatch.setenv(key_variable, "sk-test")
    openai_server.push(reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server, model=name)
    assert outcome.rows[0]["verdict"] == "correct"
    [request] = openai_server.requests
    assert {key: request.get(key) for key in sent} == sent and request["temperature"] == 1.0
    assert run_record(outcome)["model"]["args"] == sent


def test_missing_zai_key_fails_before_the_run(mini, openai_server, monkeypatch):
    """litellm's own check passes zai without a key; every episode would then fail at the provider."""
    monkeypatch.delenv("ZAI_API_KEY", raising=False)
    outcome = provider_run(mini, openai_server, model="glm-5.1")
    assert outcome.exit_code == 2 and "ZAI_API_KEY" in outcome.output
    assert openai_server.requests == []


def test_a_locally_served_alias_without_api_base_says_how_to_start_the_server(mini):
    outcome = mini.run("--model", "qwen3.5-9b")
    assert outcome.exit_code == 2
    assert "python -m sglang.launch_server --model-path Qwen/Qwen3.5-9B" in outcome.output
    assert "--api-base http://127.0.0.1:30000/v1" in outcome.output
    assert not outcome.run_dir.exists()


def test_model_arg_overrides_an_alias_argument(mini, openai_server):
    openai_server.push(reply("<answer>42</answer>"))
    outcome = provider_run(
        mini, openai_server, "--model-arg", "reasoning_effort=high", "--action-format", "text", model="gpt-5.5"
    )
    [request] = openai_server.requests
    assert request["reasoning_effort"] == "high"
    assert run_record(outcome)["model"]["args"] == {"reasoning_effort": "high"}


def test_resume_refuses_when_the_arguments_sent_changed(mini, openai_server):
    """The same --model name and flags, but the alias now stands for other provider arguments."""
    config = mini.root / "config.yaml"
    config.write_text("model_aliases: {mine: openai/model-a}\n")
    openai_server.push(reply("<answer>42</answer>"))
    assert provider_run(mini, openai_server, "--config", str(config), model="mine").exit_code == 0
    config.write_text("model_aliases: {mine: openai/model-b}\n")
    outcome = provider_run(mini, openai_server, "--config", str(config), "--redo", model="mine")
    assert outcome.exit_code == 2 and "model_settings" in outcome.output and "openai/model-b" in outcome.output
    assert len(openai_server.requests) == 1


def test_thinking_mode_reasoning_goes_back_to_the_provider_with_the_reply(mini, openai_server, monkeypatch):
    """DeepSeek's thinking mode needs each earlier reply's reasoning_content back (litellm would send a blank)."""
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    openai_server.push(
        reply(bash="cat documents/ledger.md", reasoning="The ledger should hold the units."),
        reply("<answer>42</answer>", reasoning="40 + 2."),
    )
    outcome = provider_run(mini, openai_server, model="deepseek-v4-pro")
    assert outcome.rows[0]["verdict"] == "correct"
    assistant = next(m for m in openai_server.requests[1]["messages"] if m["role"] == "assistant")
    assert assistant["reasoning_content"] == "The ledger should hold the units."
    calls = [e for e in outcome.trajectory("t1") if e["event"] == "model_call"]
    assert [call["response"]["reasoning"] for call in calls] == ["The ledger should hold the units.", "40 + 2."]


def test_responses_api_reasoning_items_go_back_with_the_reply(mini, openai_server):
    """gpt-5.5 continues its reasoning across tool calls only when its reasoning items are sent back."""
    first = reply(bash="cat documents/ledger.md", reasoning="Read the ledger.")
    openai_server.push(first, reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server, model="gpt-5.5")
    assert outcome.rows[0]["verdict"] == "correct"
    [item] = [item for item in openai_server.requests[1]["input"] if item["type"] == "reasoning"]
    assert item["summary"][0]["text"] == "Read the ledger." and item["encrypted_content"] == "opaque"

"""--max-output-tokens: every call sends the reply cap (the model's own maximum from litellm's map, else 8192,
said on the console), the context budget reserves the same, and a reply cut at the cap (`finish_reason`
"length", as OpenAI documents it: https://platform.openai.com/docs/api-reference/chat/object) is a turn spent."""

from __future__ import annotations

import pytest
import yaml

from tests.helpers.openai_server import malformed, reply

pytestmark = pytest.mark.usefixtures("openai_key")


def cut_at_the_cap(text: str):
    """A 200 reply the server stopped at max_tokens."""
    message = {"role": "assistant", "content": text}
    return malformed(choices=[{"index": 0, "message": message, "finish_reason": "length"}])


def test_a_reply_cut_at_the_cap_is_a_turn_spent_with_its_finish_reason(mini, openai_server):
    openai_server.push(cut_at_the_cap("Adding the two years gives"), reply("<answer>42</answer>"))
    outcome = mini.run("--model", "openai/test-model", "--api-base", openai_server.url, "--max-output-tokens", "50")
    [row] = outcome.rows
    assert (row["status"], row["turns"]) == ("answered", 2)
    assert [request["max_tokens"] for request in openai_server.requests] == [50, 50]
    calls = [event for event in outcome.trajectory("t1") if event["event"] == "model_call"]
    assert [call["response"]["finish_reason"] for call in calls] == ["length", "stop"]
    assert any(event["event"] == "format_error" for event in outcome.trajectory("t1"))


def test_a_model_the_map_does_not_know_is_capped_at_8192_and_the_console_says_so(mini, openai_server):
    openai_server.push(reply("<answer>42</answer>"))
    outcome = mini.run("--model", "openai/test-model", "--api-base", openai_server.url)
    assert openai_server.requests[0]["max_tokens"] == 8192
    assert "does not know openai/test-model" in outcome.output and "replies capped at 8192" in outcome.output
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert record["model"]["max_output_tokens"] == 8192
    assert record["protocol"]["output_reserve"] == 8192  # the budget reserves what the reply may take


def test_a_model_the_map_knows_is_capped_at_its_own_maximum(mini, openai_server):
    openai_server.push(reply("<answer>42</answer>"))
    outcome = mini.run("--model", "openai/gpt-4o", "--api-base", openai_server.url)
    assert openai_server.requests[0]["max_tokens"] == 16384  # litellm's map: gpt-4o's max_output_tokens
    assert "does not know" not in outcome.output
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert record["protocol"]["output_reserve"] == 16384


def test_output_reserve_given_keeps_its_own_value(mini, openai_server):
    openai_server.push(reply("<answer>42</answer>"))
    outcome = mini.run(
        "--model",
        "openai/test-model",
        "--api-base",
        openai_server.url,
        "--max-output-tokens",
        "64",
        "--output-reserve",
        "1000",
    )
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert (record["model"]["max_output_tokens"], record["protocol"]["output_reserve"]) == (64, 1000)

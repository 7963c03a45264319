"""Nothing an agent or its model sends becomes our error: each ends as the agent's own outcome, on every backend,
and is recorded as sent (issue 30, finding 3)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.cli.main import main
from harness.grading import GRADERS, grade
from harness.grading.gold import GoldSpec
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.command_size import MAX_COMMAND_BYTES
from harness.sandboxes.e2b.sandbox import HARNESS_EXEC, E2BSandbox, command_parts

UNRUNNABLE = {"nul": "echo before\x00after", "surrogate": "echo before\ud800after"}


@pytest.fixture(params=["local", "docker", "e2b-emulator"])
def backend(request: pytest.FixtureRequest, mini, monkeypatch: pytest.MonkeyPatch) -> str:
    """The `--sandbox` of a run of the mini project on each real backend (E2B: our code on the emulator)."""
    if request.param == "docker":
        request.getfixturevalue("docker_image")
        return "docker"
    if request.param == "e2b-emulator":
        emulator = request.getfixturevalue("e2b_emulator")
        monkeypatch.setitem(sys.modules, "e2b", emulator)
        monkeypatch.setenv("E2B_API_KEY", "emulator-key")
        collections = str(mini.root / "collections")
        assert main(["sandbox", "build", "e2b", "--domain", "mini", "--collections-dir", collections]) == 0
        return "e2b"
    return "local"


@pytest.mark.parametrize("kind", sorted(UNRUNNABLE))
def test_a_command_no_backend_can_run_is_the_agents_format_error(mini, backend, kind):
    """A NUL byte or a lone surrogate in the command: refused before any sandbox sees it, logged as sent; the
    episode goes on (it killed Docker's server, local ran what came before the NUL, the log failed to write)."""
    command = UNRUNNABLE[kind]
    model = mini.script([{"bash": command}, {"bash": "echo ran"}, "<answer>42</answer>"])
    outcome = mini.run("--model", model, "--sandbox", backend)
    [row] = outcome.rows
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", 3), row["detail"]
    events = outcome.trajectory("t1")
    [refused] = [e for e in events if e["event"] == "format_error"]
    assert "which bash cannot run" in refused["problem"]
    [sent] = [e for e in events if e["event"] == "model_call"][:1]
    assert json.loads(sent["response"]["tool_calls"][0]["arguments"])["command"] == command
    assert [e["command"] for e in events if e["event"] == "action"] == ["echo ran"]


def test_a_lone_surrogate_in_the_reply_is_recorded_as_sent_and_the_answer_graded(mini):
    """`json.loads` of a provider's reply can yield one; the trajectory, the row, the report and the viewer
    take it (the trajectory writer raised UnicodeEncodeError: harness_error, the answer lost)."""
    text = "Sum \ud800 of the years: <answer>42</answer>"
    outcome = mini.run("--model", mini.script([text]))
    [row] = outcome.rows
    assert (row["status"], row["verdict"]) == ("answered", "correct"), row["detail"]
    [call] = [e for e in outcome.trajectory("t1") if e["event"] == "model_call"]
    assert call["response"]["text"] == text
    assert main(["report", str(outcome.run_dir)]) == 0
    assert main(["view", str(outcome.run_dir), "--static", str(mini.root / "site")]) == 0
    episode = json.loads((mini.root / "site" / "episodes" / "0.json").read_text(encoding="utf-8"))
    assert text in json.dumps(episode, ensure_ascii=False)


def test_a_lone_surrogate_in_the_answer_is_the_agents_unreadable_answer(mini):
    """The row holds it (escaped, as sent) and reads back (the JSON reader refused the row: the run's end table
    failed, exit 2, and so did every report of the run)."""
    outcome = mini.run("--model", mini.script(["<answer>4\ud8002</answer>"]))
    [row] = outcome.rows
    assert (row["status"], row["verdict"], row["answer"]) == ("answered", "unparseable", "4\ud8002"), row["detail"]
    assert outcome.exit_code == 0 and main(["report", str(outcome.run_dir)]) == 0


ABSURD = ["1e999999", "1e99999999", "1e-99999999", "1e" + "9" * 38]


@pytest.mark.parametrize("grader", ["numeric", "numeric_tol"])
@pytest.mark.parametrize("answer", ABSURD)
def test_an_absurd_exponent_is_unparseable_not_an_exception(grader, answer):
    gold = GoldSpec("42", None, 0.01 if grader == "numeric_tol" else None)
    graded = grade(grader, f"<answer>{answer}</answer>", gold)
    assert (graded.verdict, graded.reasons) == ("unparseable", ["OUT_OF_RANGE"])


def test_an_exponent_within_range_is_still_a_number():
    graded = grade("numeric", "<answer>4.2e1</answer>", GoldSpec("42", None))
    assert graded.verdict == "correct" and "NOTATION" in graded.reasons


def test_an_absurd_answer_ends_the_episode_as_graded_and_is_not_retried(mini):
    outcome = mini.run("--model", mini.script(["<answer>1e99999999</answer>"]), "--retry-errors", "1")
    assert [(r["status"], r["verdict"], r["reasons"]) for r in outcome.rows] == [
        ("answered", "unparseable", ["OUT_OF_RANGE"])
    ]


def test_a_grader_that_raises_on_a_submission_grades_it_and_is_not_retried(mini, monkeypatch):
    """A bug of ours in a grader is no infrastructure failure of the agent's episode: a second try would
    give a failing model pass@2. The row is graded `unparseable/GRADER_ERROR` and keeps the traceback."""

    def broken(*arguments):
        raise ArithmeticError("grader bug")

    monkeypatch.setattr(GRADERS["numeric"], "grade", broken)
    outcome = mini.run("--model", "oracle", "--retry-errors", "1")
    [row] = outcome.rows
    assert (row["status"], row["verdict"], row["reasons"]) == ("answered", "unparseable", ["GRADER_ERROR"])
    assert "grader bug" in row["detail"] and "Traceback" in row["detail"]
    [logged] = [e for e in outcome.trajectory("t1") if e["event"] == "harness_error"]
    assert logged["during"] == "grading" and "grader bug" in logged["error"]


@pytest.mark.usefixtures("openai_key")
@pytest.mark.slow
def test_a_lone_surrogate_from_the_provider_goes_back_to_it_and_the_episode_goes_on(mini, openai_server):
    """A reply holding `\\ud800` (as JSON escapes it): the next call's body could not be encoded, a model_error
    the run retried; it goes back as U+FFFD, and the log keeps what the provider sent."""
    from tests.helpers.openai_server import reply

    def respond(request):
        if any(message.get("role") == "tool" for message in request["messages"]):
            return reply("<answer>42</answer>")
        return reply("reading \ud800 the ledger", bash="cat documents/ledger.md")

    openai_server.respond = respond
    outcome = mini.run("--model", "openai/test-model", "--api-base", openai_server.url)
    [row] = outcome.rows
    assert (row["status"], row["verdict"]) == ("answered", "correct"), row["detail"]
    calls = [e for e in outcome.trajectory("t1") if e["event"] == "model_call"]
    assert calls[0]["response"]["text"] == "reading \ud800 the ledger"
    assert "reading \ufffd the ledger" in json.dumps(openai_server.requests[-1], ensure_ascii=False)


OVERSIZED = ": " + "x" * 200_000 + "; echo ran"
QUOTES_THAT_FIT = ": " + '"\'"' * 40_000 + "; echo fits"
"""120 KB under the argument limit, but 280 KB once quoted for a shell line (each `'` becomes `'"'"'`)."""


def test_a_command_over_the_argument_limit_is_the_agents_result_on_every_backend(mini, backend):
    """200 KB in one command: Linux refuses one argument over 128 KiB (E2BIG). It was `sandbox_error` locally
    (retried as our failure), exit 126 on Docker and exit 1 on E2B; now the same result everywhere, before any
    sandbox sees it, and the episode goes on."""
    model = mini.script([{"bash": OVERSIZED}, {"bash": "echo ran"}, "<answer>42</answer>"])
    outcome = mini.run("--model", model, "--sandbox", backend, "--retry-errors", "1")
    [row] = outcome.rows
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", 3), row["detail"]
    observed = [e for e in outcome.trajectory("t1") if e["event"] == "observation"]
    assert (observed[0]["exit_code"], observed[0]["stdout"]) == (126, "")
    assert "200,012 bytes" in observed[0]["stderr"] and "131,071" in observed[0]["stderr"]
    assert observed[1]["stdout"] == "ran\n"


def test_a_command_within_the_argument_limit_runs_on_every_backend(mini, backend):
    """Whatever the limit lets through runs everywhere: E2B's shell line quoted it to five times its size."""
    model = mini.script([{"bash": QUOTES_THAT_FIT}, "<answer>42</answer>"])
    outcome = mini.run("--model", model, "--sandbox", backend)
    [row] = outcome.rows
    assert (row["status"], row["turns"]) == ("answered", 2), row["detail"]
    [observed] = [e for e in outcome.trajectory("t1") if e["event"] == "observation"]
    assert (observed["exit_code"], observed["stdout"]) == (0, "fits\n"), observed["stderr"]


@pytest.mark.parametrize("command", ["'" * MAX_COMMAND_BYTES, "\U0001f600" * (MAX_COMMAND_BYTES // 4) + "'''"])
def test_the_e2b_command_line_carries_a_command_at_the_limit_however_quoted(tmp_path, command):
    """envd runs our line as one `bash -c` argument: the command quoted into it (`'` as `'"'"'`) went past the
    limit at a fifth of it; it now travels in environment variables, each under the limit too."""
    stub = tmp_path / "harness-exec"
    stub.write_text('#!/bin/bash\nprintf %s "$2"\n')
    stub.chmod(0o755)
    box = E2BSandbox(object(), "template", "key", "run", "episode", SandboxSettings(), 60)
    parts = command_parts(command)
    line = box.command_line(60.0, len(parts)).replace(HARNESS_EXEC, str(stub))
    ran = subprocess.run(["/bin/bash", "-c", line], env=parts, capture_output=True, check=False)
    assert (ran.returncode, ran.stderr) == (0, b"")
    assert ran.stdout == command.encode()


NESTED_ARGUMENTS = {
    "list": '{"command": ' + "[" * 1000 + "]" * 1000 + "}",
    "object": '{"a":' * 1000 + "1" + "}" * 1000,
    "deeper": '{"command": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "huge_integer": '{"command": ' + "7" * 5000 + "}",
}
NESTED_PROBLEMS = {
    "list": "nested too deeply",
    "object": "nested too deeply",
    "deeper": "nested too deeply",
    "huge_integer": "a number has over 4,300 digits",
}


def nested_reply(api: str, arguments: str):
    """A reply whose one bash call has `arguments`, as chat completions or the Responses API send it."""
    from tests.helpers.openai_server import malformed

    if api == "responses":
        call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash", "arguments": arguments}
        return malformed(output=[call | {"status": "completed"}])
    call = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": arguments}}
    message = {"role": "assistant", "content": "", "tool_calls": [call]}
    return malformed(choices=[{"index": 0, "message": message, "finish_reason": "tool_calls"}])


@pytest.mark.usefixtures("openai_key")
@pytest.mark.parametrize("kind", sorted(NESTED_ARGUMENTS))
@pytest.mark.parametrize(("api", "model"), [("chat", "openai/test-model"), ("responses", "gpt-5.5")])
def test_tool_arguments_nested_absurdly_deep_are_a_spent_turn(mini, openai_server, kind, api, model):
    """JSON nested 1,000 deep raised RecursionError in litellm's reading of the reply (and in ours), an integer
    of 5,000 digits a plain ValueError (Python's integer-string limit, issue 45): an "Invalid response object"
    500, retried to `model_error`, where malformed arguments cost the agent a turn. The arguments are logged as
    sent and not sent back as a call (a server rendering its chat template would choke)."""
    from tests.helpers.openai_server import reply

    sent = NESTED_ARGUMENTS[kind]
    openai_server.push(nested_reply(api, sent), reply(bash="cat documents/ledger.md"), reply("<answer>42</answer>"))
    outcome = mini.run("--model", model, "--api-base", openai_server.url, "--retry-errors", "1")
    [row] = outcome.rows
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", 3), row["detail"]
    events = outcome.trajectory("t1")
    [refused] = [e for e in events if e["event"] == "format_error"]
    assert NESTED_PROBLEMS[kind] in refused["problem"]
    first = next(e for e in events if e["event"] == "model_call")
    assert first["response"]["attempts"] == [] and first["response"]["tool_calls"][0]["arguments"] == sent

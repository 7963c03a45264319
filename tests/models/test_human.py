"""`--model human`: the real command line driven through a pseudo-terminal, as a person at it would: commands
typed run in the sandbox under the run's budgets, `submit` ends the episode, Ctrl-C leaves a resumable run."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.records.trajectory import read_jsonl
from tests.conftest import REPO


class Terminal:
    """`python -m harness --model human ...` on a pseudo-terminal of its own (its controlling terminal, so
    Ctrl-C typed there interrupts it as it would a person's shell)."""

    def __init__(self, project, *arguments: str, run_id: str = "human"):
        self.project, self.run_id, self.seen = project, run_id, b""
        argv = [
            sys.executable,
            "-m",
            "harness",
            "--model",
            "human",
            "--domain",
            "mini",
            *project.folder_arguments(run_id),
            *arguments,
        ]
        env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="120", TERM="dumb")
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: exec at once (nothing of pytest runs here)
            os.execve(sys.executable, argv, env)

    def expect(self, text: str, timeout_s: float = 60) -> str:
        """Everything shown up to and including TEXT."""
        deadline = time.monotonic() + timeout_s
        while text.encode() not in self.seen:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise AssertionError(f"{text!r} not shown; the terminal shows:\n{self.seen.decode()[-3000:]}")
            try:
                self.seen += os.read(self.fd, 65536)
            except OSError:  # the program exited
                raise AssertionError(f"{text!r} not shown before exit:\n{self.seen.decode()[-3000:]}") from None
        shown, _, self.seen = self.seen.partition(text.encode())
        return (shown + text.encode()).decode().replace("\r\n", "\n")  # the terminal's line ends

    def type(self, line: str) -> str:
        """Type LINE at the prompt; returns what was shown until the next prompt (or the end)."""
        os.write(self.fd, line.encode() + b"\n")
        return self.expect("$ ")

    def finish(self, last: bytes | None = None, timeout_s: float = 60) -> tuple[int, str]:
        """Type LAST (if any) and read until the program exits; its exit code and what it showed."""
        if last is not None:
            os.write(self.fd, last)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.5)
            if ready:
                try:
                    self.seen += os.read(self.fd, 65536)
                except OSError:
                    break
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status), self.seen.decode().replace("\r\n", "\n")

    def rows(self) -> list[dict]:
        path = self.project.results_dir / self.run_id / "results.jsonl"
        return read_jsonl(path) if path.exists() else []

    def events(self) -> list[dict]:
        return read_jsonl(self.project.results_dir / self.run_id / "episodes" / "mini" / "t1.jsonl")

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


@pytest.fixture
def terminals():
    started: list[Terminal] = []
    yield started
    for terminal in started:  # a failed test leaves no run behind
        terminal.kill()


def start(terminals, project, *arguments: str, run_id: str = "human") -> Terminal:
    terminal = Terminal(project, *arguments, run_id=run_id)
    terminals.append(terminal)
    return terminal


def test_a_person_types_commands_that_run_in_the_sandbox_and_submits(mini, terminals):
    terminal = start(terminals, mini)
    shown = terminal.expect("$ ")
    assert "How many units in 2020 and 2021 together?" in shown and "Answer format: integer" in shown
    assert "Your only tool is bash" in shown  # the system prompt, as the model is sent it
    output = terminal.type("cat documents/ledger.md; id -u; touch documents/x")
    assert "| 2020 | 40 |" in output and "Exit code: 1" in output and "Read-only file system" in output
    assert "\n2000\n" in output  # the sandbox's user, not the caller
    assert "[199 replies and" in output  # the observation as the model sees it, budgets left
    code, shown = terminal.finish(b"submit 42\n")
    assert code == 0 and "results:" in shown  # the run's table and folder, as after any run
    [row] = terminal.rows()
    assert (row["status"], row["verdict"], row["answer"], row["turns"]) == ("answered", "correct", "42", 2)
    assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (0, 0, None)
    events = terminal.events()
    assert events[0]["model"] == "human"
    assert [e["command"] for e in events if e["event"] == "action"] == [
        "cat documents/ledger.md; id -u; touch documents/x"
    ]
    assert events[-1]["submission"] == "<answer>42</answer>"


HOSTILE = (
    "\x1b]0;pwned title\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[HAll clear: submit 7\x1b[6n\x9b31m\x07\x00done"
)
"""A document that sets the title, writes the clipboard, clears the screen with forged text, asks the
terminal for its cursor (the answer lands in the person's next line), in 7- and 8-bit forms."""


def test_a_documents_escape_sequences_are_shown_to_the_person_never_sent_to_the_terminal(mini, terminals):
    (mini.root / "collections" / "mini" / "notes.md").write_text(HOSTILE)
    terminal = start(terminals, mini)
    terminal.expect("$ ")
    shown = terminal.type("cat documents/notes.md")
    assert "\\x1b]0;pwned title\\x07\\x1b]52;c;" in shown and "\\x1b[6n\\x9b31m\\x07\\x00done" in shown
    for control in (b"\x1b", b"\x07", b"\xc2\x9b", b"\x00"):
        assert control not in shown.encode(), control
    terminal.finish(b"submit 7\n")


def test_the_turn_budget_and_the_command_timeout_apply_to_a_person(mini, terminals):
    terminal = start(terminals, mini, "--max-turns", "2", "--command-timeout", "1")
    terminal.expect("$ ")
    output = terminal.type("sleep 5; echo never")
    shown = output.partition("--- tool ---")[2]  # after the typed line's echo
    assert "never" not in shown and "ran past its time limit" in shown
    code, _ = terminal.finish(b"true\n")
    [row] = terminal.rows()
    assert code == 0 and (row["status"], row["turns"]) == ("turn_limit", 2)
    [timed, last] = [e for e in terminal.events() if e["event"] == "observation"]
    assert timed["timed_out"] is True and last["exit_code"] == 0


def test_the_persons_own_time_counts_against_the_time_budget(mini, terminals):
    terminal = start(terminals, mini, "--time-limit", "2")
    terminal.expect("$ ")
    code, _ = terminal.finish()  # types nothing
    [row] = terminal.rows()
    assert code == 0 and row["status"] == "time_limit" and row["duration_s"] >= 2


def test_ctrl_c_leaves_a_resumable_run_and_the_resume_offers_the_task_again(mini, terminals):
    first = start(terminals, mini)
    first.expect("$ ")
    first.type("ls documents")
    code, shown = first.finish(b"\x03")
    assert code == 130 and "interrupted" in shown
    [row] = first.rows()
    assert row["status"] == "cancelled"
    again = start(terminals, mini)
    assert "How many units" in again.expect("$ ")
    code, _ = again.finish(b"<answer>42</answer>\n")
    assert code == 0 and [row["status"] for row in again.rows()] == ["cancelled", "answered"]
    assert again.rows()[-1]["verdict"] == "correct"
    assert list((mini.results_dir / "human" / "episodes" / "mini" / "previous").glob("t1.*.jsonl"))


def test_the_report_shows_the_person_beside_the_models(mini, terminals):
    terminal = start(terminals, mini)
    terminal.expect("$ ")
    assert terminal.finish(b"submit 41\n")[0] == 0
    model = mini.run("--model", mini.script(["<answer>42</answer>"]), run_id="model")
    out = mini.root / "report"
    assert main(["report", str(mini.results_dir / "human"), str(model.run_dir), "--out", str(out)]) == 0
    report = (out / "report.md").read_text()
    # models by overall accuracy: the scripted model (correct) before the person (wrong)
    header = next(line for line in report.splitlines() if line.startswith("| domain |"))
    assert header.startswith("| domain | scripted:") and header.endswith("| human |"), header
    assert "Paired comparison: scripted:" in report and " vs human" in report


@pytest.mark.parametrize("arguments", [("--workers", "2"), ("--executor", "ray")])
def test_a_person_runs_one_episode_at_a_time(mini, arguments):
    outcome = mini.run("--model", "human", *arguments)
    assert outcome.exit_code == 2 and "--model human: one episode at a time" in outcome.output
    assert not Path(outcome.run_dir).exists()


def test_human_mode_needs_a_terminal(mini):
    outcome = mini.run("--model", "human")  # pytest's standard input is no terminal
    assert outcome.exit_code == 2 and "standard input is not a terminal" in outcome.output
    assert not Path(outcome.run_dir).exists()

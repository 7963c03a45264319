"""`python -m harness show RUN [TASK]`: a trajectory turn by turn in the terminal, with its verdict, timing
split and evidence; `read_trajectory` takes a str path."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios

from harness.cli.main import main
from harness.records.events import AgentTranscriptEvent
from harness.records.trajectory import event_line, read_trajectory
from tests.conftest import REPO


def test_show_prints_a_trajectory_turn_by_turn_with_its_verdict_and_timing(mini):
    script = mini.script([{"text": "Reading the ledger.", "bash": "cat documents/ledger.md"}, "<answer>42</answer>"])
    run = mini.run("--model", script)
    shown = subprocess.run(
        [sys.executable, "-m", "harness", "show", str(run.run_dir), "t1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "mini/t1 (epoch 1)" in out and "How many units in 2020 and 2021 together?" in out
    assert out.index("turn 1 · reply") < out.index("$ cat documents/ledger.md") < out.index("| 2020 | 40 |")
    assert out.count("cat documents/ledger.md") == 1 and '"command"' not in out  # not again as JSON arguments
    assert out.index("| 2020 | 40 |") < out.index("turn 2 · reply") < out.index("answered · correct · answer '42'")
    assert "agent " in out and "queued " in out and "sandbox start " in out
    assert "evidence (" in out


def test_show_without_a_task_lists_the_runs_episodes(mini, capsys):
    run = mini.run("--model", mini.script(["<answer>42</answer>"]))
    assert main(["show", str(run.run_dir)]) == 0
    out = capsys.readouterr().out
    assert "t1" in out and "answered" in out and "show one with" in out


def test_show_names_a_task_the_run_does_not_have(mini, capsys):
    run = mini.run("--model", mini.script(["<answer>42</answer>"]))
    assert main(["show", str(run.run_dir), "nope"]) == 2
    assert "no episode of task 'nope'" in capsys.readouterr().err


def test_read_trajectory_takes_a_str_path(mini):
    run = mini.run("--model", mini.script(["<answer>42</answer>"]))
    events = read_trajectory(str(run.run_dir / "episodes" / "mini" / "t1.jsonl"))
    assert events[0]["event"] == "episode_start" and events[-1]["event"] == "episode_end"


HOSTILE = {
    "title": "\x1b]0;pwned\x07",
    "clipboard": "\x1b]52;c;ZWNobyBwd25lZA==\x07",
    "clear": "\x1b[2J\x1b[H",
    "c1": "\x9b2J",
    "cr": "\r══ answered · correct · answer '42'",
    "up": "\x1b[1A\x1b[2K══ answered · correct · answer '7'",
}
"""What a reply, a command's output or a task's question can hold to act on the person's terminal."""
PRINTF = "printf '\\033]0;pwned\\007\\033]52;c;eA==\\007\\033[2J\\r══ answered · correct\\n'"


def hostile_run(mini):
    task = json.loads((mini.tasks_dir / "mini.jsonl").read_text()) | {"question": "How many? " + HOSTILE["title"]}
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    replies = [{"text": "".join(HOSTILE.values()), "bash": PRINTF + " # " + HOSTILE["up"]}, "<answer>7</answer>"]
    return mini.run("--model", mini.script(replies))


def assert_escaped(out: bytes) -> None:
    assert b"\x1b" not in out and b"\x07" not in out and "\x9b".encode() not in out
    assert b"\r" not in out.replace(b"\r\n", b"\n")
    text = out.decode()
    assert "\\x0d══ answered · correct · answer '42'" in text and "\\x1b]52;c;" in text
    assert "\\x1b[1A\\x1b[2K══ answered" in text and "\\x9b2J" in text


def test_show_piped_escapes_what_the_agent_the_provider_and_the_task_wrote(mini):
    run = hostile_run(mini)
    shown = subprocess.run(
        [sys.executable, "-m", "harness", "show", str(run.run_dir), "t1"],
        cwd=REPO,
        capture_output=True,
        timeout=300,
        env=os.environ | {"COLUMNS": "1000"},  # no wrapping inside what the assertions look for
    )
    assert shown.returncode == 0, shown.stderr
    assert_escaped(shown.stdout)
    assert "How many? \\x1b]0;pwned\\x07" in shown.stdout.decode()


def test_show_through_a_pager_escapes_them_too(mini):
    """On a terminal `show` pages its output with its styles (PAGER=cat writes it straight to the terminal)."""
    run = hostile_run(mini)
    controller, terminal = pty.openpty()
    attributes = termios.tcgetattr(terminal)
    attributes[1] &= ~termios.ONLCR  # the terminal's own CR before each newline is not the output's
    termios.tcsetattr(terminal, termios.TCSANOW, attributes)
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 1000, 0, 0))  # no wrapping, as piped
    environment = os.environ | {"PAGER": "cat", "TERM": "xterm-256color", "COLUMNS": "1000"}  # a set COLUMNS wins
    shown = subprocess.Popen(
        [sys.executable, "-m", "harness", "show", str(run.run_dir), "t1"],
        cwd=REPO,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=environment,
    )
    os.close(terminal)
    out = bytearray()
    with contextlib.suppress(OSError):  # EIO once the last writer closed the terminal
        while chunk := os.read(controller, 65536):
            out += chunk
    os.close(controller)
    assert shown.wait(timeout=300) == 0, bytes(out)
    assert b"answered" in out
    assert_escaped(re.sub(rb"\x1b\[[0-9;]*m", b"", bytes(out)))  # but for our own styles (SGR)


def transcript_log(tmp_path, transcript) -> str:
    """A trajectory holding one installed agent's own transcript (`show` takes a trajectory file as well)."""
    event = AgentTranscriptEvent(agent="mini-swe-agent", version="2.4.6", transcript=transcript)
    (tmp_path / "t1.jsonl").write_text(event_line(event.kind, **event.to_dict()))
    return str(tmp_path / "t1.jsonl")


def test_show_prints_an_agents_own_transcript_escaped_and_bounded(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # no wrapping inside what the assertions look for
    hostile = "".join(HOSTILE.values())
    reply = {"role": "assistant", "content": "x" * 10_000_000, "extra": {"actions": [{"command": "echo " + hostile}]}}
    role = "user\n══ answered · correct · answer '7'" + HOSTILE["title"]  # a forged verdict on a line of its own
    messages = [{"role": role, "content": "Q \u202e" + hostile}, reply]
    log = transcript_log(tmp_path, {"messages": messages, "trajectory_format": "mini-swe-agent-1.1"})
    assert main(["show", log]) == 0
    out = capsys.readouterr().out
    assert_escaped(out.encode())
    assert "mini-swe-agent 2.4.6 · its own transcript (mini-swe-agent-1.1) · 2 messages" in out
    assert "── user\\x0a══ answered · correct · answer '7'\\x1b]0;pwned\\x07" in out
    assert not [line for line in out.splitlines() if line.startswith("══ answered")]
    assert "Q \\u202e\\x1b]0;pwned" in out and "\u202e" not in out
    assert "$ echo \\x1b]0;pwned" in out
    assert "… 9,980,000 more characters" in out and len(out) < 40_000


def test_show_prints_a_transcript_cut_short_raw(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # no wrapping inside what the assertions look for
    log = transcript_log(tmp_path, '{"info": {"exit_status": "Subm\x1b[2J')
    assert main(["show", log]) == 0
    out = capsys.readouterr().out
    assert "its own transcript, shown raw (not JSON: the file as the agent left it)" in out
    assert '{"info": {"exit_status": "Subm\\x1b[2J' in out and "\x1b" not in out

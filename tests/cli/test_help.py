"""Help that helps: a mistyped flag names the nearest one, the missing-key error says how to reach a local
server, and every file `--help` names as a default exists."""

from __future__ import annotations

import re

import pytest

from harness.cli.main import COMMANDS, build_parser, main
from tests.conftest import REPO


def test_a_mistyped_flag_suggests_the_nearest_in_one_line(capsys):
    assert main(["--modle", "oracle", "--domain", "demo"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == "error: unknown flag --modle; did you mean --model?"
    assert captured.out == ""


def test_a_mistyped_flag_of_a_command_suggests_that_commands_flag(capsys):
    assert main(["report", "some-run", "--outt", "x"]) == 2
    assert "did you mean --out?" in capsys.readouterr().err


def test_the_missing_key_error_says_a_dummy_works_and_hosted_vllm_needs_none(mini, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    outcome = mini.run("--model", "openai/x", "--api-base", "http://127.0.0.1:9/v1")
    assert outcome.exit_code == 2
    assert "OPENAI_API_KEY=dummy" in outcome.output and "hosted_vllm/NAME needs none" in outcome.output


FILE_NAMED = re.compile(r"(?<![\w/.])((?:harness|tasks|collections|docs)/[\w./-]+\.(?:yaml|yml|json|jsonl|md))")


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_file_the_help_names_exists(command):
    parser = build_parser() if command is None else COMMANDS[command].build_parser()
    named = FILE_NAMED.findall(" ".join(parser.format_help().split()))
    missing = [path for path in named if not (REPO / path).is_file()]
    assert missing == []


def test_the_runs_help_names_its_default_files():
    assert {"harness/inputs/prompts/default.yaml", "harness/models/aliases.yaml"} <= set(
        FILE_NAMED.findall(" ".join(build_parser().format_help().split()))
    )

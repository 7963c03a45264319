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


def test_a_mistyped_model_name_suggests_the_closest_names(capsys):
    assert main(["--model", "orcale", "--domain", "demo"]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "unknown model 'orcale'; did you mean oracle?" in said


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


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--max-turn", "5"], "unknown flag --max-turn; did you mean --max-turns?"),
        (["--epoch", "2"], "unknown flag --epoch; did you mean --epochs?"),
        (["--max-turn=5"], "unknown flag --max-turn; did you mean --max-turns?"),
        (["-m", "x"], "unknown flag -m; flags are spelled in full, e.g. --model"),
        (["--zzz"], "unknown flag --zzz (--help lists the flags)"),
    ],
)
def test_a_flag_is_matched_as_spelled_not_as_the_start_of_a_longer_one(argv, said, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["--model", "oracle", "--domain", "demo", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"error: {said}" and captured.out == ""
    assert list(tmp_path.iterdir()) == []


def test_a_flag_that_starts_several_names_them_all_in_one_line(capsys):
    assert main(["--model", "oracle", "--domain", "demo", "--max", "5"]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and "unknown flag --max; did you mean one of " in said and "--max-turns" in said


@pytest.mark.parametrize(
    "argv",
    [
        ["collection", "build", "src", "--domain", "d", "--worker", "2"],
        ["tasks", "import", "mudabench", "data.json", "--pdf-dir", "p", "--domain", "d", "--worker", "2"],
    ],
)
def test_a_subcommands_flag_is_matched_as_spelled(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == "error: unknown flag --worker; did you mean --workers?"
    assert list(tmp_path.iterdir()) == []


def test_a_value_that_names_a_subcommand_is_read_as_the_value(capsys):
    assert main(["collection", "build", "missing-src", "--domain", "stats", "--workers", "1"]) == 2
    assert "source folder not found" in capsys.readouterr().err


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_no_parser_takes_an_abbreviation(command):
    parser = build_parser() if command is None else COMMANDS[command].build_parser()
    assert parser.allow_abbrev is False


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["oracle"], "error: argument COMMAND: invalid choice: 'oracle' (choose from "),
        (["report"], "error: the following arguments are required: RUN"),
        (["collection", "build", "src", "--domain", "d", "--workers", "two"], "error: argument --workers: invalid "),
    ],
)
def test_what_argparse_refuses_is_one_line_without_the_usage(argv, said, capsys):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(said) and captured.err.count("\n") == 1 and captured.out == ""
    assert captured.err.rstrip().endswith("--help shows the usage)")

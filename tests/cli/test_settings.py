"""Every setting is defined once (RunConfig), range-checked wherever it comes from, and every command has --help."""

from __future__ import annotations

import pytest

from tests.inputs.test_bad_input import assert_rejected


@pytest.mark.parametrize(
    ("flag", "value", "fragment"),
    [
        ("--cpus", "0", "must be positive"),
        ("--cpus", "-1", "must be positive"),
        ("--time-limit", "nan", "not a finite number"),
        ("--time-limit", "inf", "not a finite number"),
        ("--command-timeout", "nan", "not a finite number"),
        ("--model-timeout", "inf", "not a finite number"),
        ("--workers", "0", "must be positive"),
        ("--output-limit", "0", "must be positive"),
        ("--context-window", "-5", "must be positive"),
        ("--limit", "0", "must be positive"),
        ("--output-reserve", "-1", "must not be negative"),
        ("--max-cost", "nan", "not a finite number"),
        ("--temperature", "-0.5", "must not be negative"),
    ],
)
def test_out_of_range_flag_is_refused_before_anything_runs(mini, flag, value, fragment):
    assert_rejected(mini.run("--model", "oracle", flag, value), flag, fragment)


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("time_limit: .nan", "not a finite number"),
        ("cpus: 0", "must be positive"),
        ("workers: 2.5", "is not a valid int"),
        ("action-format: shell", "not one of toolcall, text"),
        ("sandbox: vm", "not one of local, docker, e2b"),
    ],
)
def test_out_of_range_config_file_setting_names_file_line_and_field(mini, line, fragment):
    config = mini.root / "settings.yaml"
    config.write_text(f"model: oracle\n{line}\n")
    assert_rejected(mini.run("--config", str(config)), "settings.yaml:2:", fragment)


def test_every_setting_has_a_flag_with_help_and_every_flag_a_setting():
    from harness.cli.main import build_parser
    from harness.inputs.config import flag_of, setting_fields

    parser = build_parser()
    flags = {option for action in parser._actions for option in action.option_strings}
    settings = [spec for spec in setting_fields() if spec.metadata["cli"]]
    assert [flag_of(spec.name) for spec in settings if flag_of(spec.name) not in flags] == []
    assert [spec.name for spec in settings if not spec.metadata["help"]] == []
    assert flags - {flag_of(spec.name) for spec in settings} == {"-h", "--help", "--config"}


def test_top_level_help_lists_every_command(capsys):
    from harness.cli.main import COMMANDS, main

    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert [name for name in COMMANDS if name not in text] == []
    assert "--time-limit" in text


@pytest.mark.parametrize("command", ["replay", "report", "view", "sandbox"])
def test_each_command_has_its_own_help(capsys, command):
    from harness.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    assert f"python -m harness {command}" in capsys.readouterr().out


def test_a_limit_fallback_is_said_on_the_console_at_start(mini, without_cgroups):
    outcome = mini.run("--model", "oracle")
    assert outcome.exit_code == 0
    assert "warning: the memory limit is per process" in outcome.output and "cgroups unavailable" in outcome.output

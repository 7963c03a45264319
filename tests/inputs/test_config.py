"""Settings come from defaults < YAML file < CLI flags."""

from __future__ import annotations

import yaml


def test_yaml_settings_apply_and_cli_flags_win(mini):
    config = mini.root / "run.yaml"
    config.write_text(yaml.safe_dump({"model": "oracle", "max-turns": 7, "time_limit": 99, "workers": 2}))
    outcome = mini.run("--config", str(config), "--max-turns", "5")
    assert outcome.exit_code == 0
    recorded = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert recorded["config"]["max_turns"] == 5
    assert recorded["config"]["time_limit"] == 99.0
    assert recorded["config"]["workers"] == 2


def test_environment_variables_set_the_default_folders(mini, monkeypatch):
    monkeypatch.setenv("HARNESS_TASKS_DIR", str(mini.tasks_dir))
    monkeypatch.setenv("HARNESS_COLLECTIONS_DIR", str(mini.root / "collections"))
    from harness.cli.main import main

    code = main(["--model", "oracle", "--domain", "mini", "--results-dir", str(mini.results_dir), "--run-id", "env"])
    assert code == 0
    assert (mini.results_dir / "env" / "results.jsonl").exists()


def test_limit_and_task_id_select_tasks(mini):
    lines = (mini.tasks_dir / "mini.jsonl").read_text()
    extra = lines.replace('"id": "t1"', '"id": "t2"')
    (mini.tasks_dir / "mini.jsonl").write_text(lines + extra)
    assert [r["task_id"] for r in mini.run("--model", "oracle", "--task-id", "t2", run_id="a").rows] == ["t2"]
    assert len(mini.run("--model", "oracle", "--limit", "1", run_id="b").rows) == 1


def test_help_documents_every_flag(capsys):
    import pytest

    from harness.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    flags = [
        "--model",
        "--domain",
        "--task-id",
        "--limit",
        "--tasks-dir",
        "--collections-dir",
        "--results-dir",
        "--run-id",
        "--sandbox",
        "--workers",
        "--max-turns",
        "--time-limit",
        "--command-timeout",
        "--context-window",
        "--action-format",
        "--config",
        "HARNESS_TASKS_DIR",
        "HARNESS_COLLECTIONS_DIR",
    ]
    assert [flag for flag in flags if flag not in text] == []


def test_a_custom_prompt_file_is_used_and_is_part_of_the_protocol(mini):
    from harness.inputs.prompts import DEFAULT_PROMPTS

    custom = mini.root / "prompts.yaml"
    custom.write_text(DEFAULT_PROMPTS.read_text().replace("You are a careful research analyst.", "You are Ada."))
    outcome = mini.run("--model", "oracle", "--prompts", str(custom))
    first_call = next(e for e in outcome.trajectory("t1") if e["event"] == "model_call")
    assert first_call["messages"][0]["content"].startswith("You are Ada.")
    resumed = mini.run("--model", "oracle")
    assert resumed.exit_code == 2 and "prompts" in resumed.output


def test_a_broken_prompt_file_is_an_input_error(mini):
    custom = mini.root / "prompts.yaml"
    custom.write_text("system: '{{ unclosed'\ntask: x\nobservation: x\nformat_error: x\n")
    outcome = mini.run("--model", "oracle", "--prompts", str(custom))
    assert outcome.exit_code == 2 and "prompts.yaml" in outcome.output and "field 'system'" in outcome.output
    custom.write_text("system: hi\n")
    outcome = mini.run("--model", "oracle", "--prompts", str(custom))
    assert outcome.exit_code == 2 and "field 'task': missing template" in outcome.output


def test_yaml_syntax_errors_are_one_line_with_file_and_line(mini):
    custom = mini.root / "prompts.yaml"
    custom.write_text("system: hi\ntask: [unclosed\n")
    outcome = mini.run("--model", "oracle", "--prompts", str(custom))
    message = outcome.output.strip()
    assert outcome.exit_code == 2 and len(message.splitlines()) == 1
    assert "prompts.yaml:3: invalid YAML" in message


def test_scratch_space_not_below_the_memory_limit_is_refused_naming_the_setting(mini):
    outcome = mini.run("--model", "oracle", "--memory-mb", "1024")
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    [message] = outcome.output.strip().splitlines()
    assert message.startswith("error: --disk-mb: 2048 MB must be below --memory-mb (1024 MB)"), message
    config = mini.root / "run.yaml"
    config.write_text("model: oracle\nmemory-mb: 512\ndisk_mb: 512\n")
    outcome = mini.run("--config", str(config))
    assert outcome.exit_code == 2 and "run.yaml:3: field 'disk_mb': 512 MB must be below" in outcome.output


def test_sandboxes_and_connections_at_once_default_to_the_workers_and_run_yaml_keeps_what_was_given():
    from harness.inputs.config import RunConfig, config_to_dict
    from harness.inputs.config_sources import build_config

    config = build_config({}, {"model": "oracle", "domain": "mini", "workers": 3, "max_connections": 2})
    assert (config.sandboxes_at_once, config.connections_at_once) == (3, 2)
    assert config_to_dict(config)["max_sandboxes"] is None  # the default stays unwritten in run.yaml
    assert RunConfig(workers=5, max_sandboxes=1).sandboxes_at_once == 1


def test_no_module_derives_the_concurrency_defaults_itself():
    from pathlib import Path

    import harness

    package = Path(harness.__file__).parent
    derivations = ("max_sandboxes or", "max_connections or")
    places = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if any(text in path.read_text() for text in derivations)
    ]
    assert places == ["inputs/config.py"]

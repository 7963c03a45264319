"""Every YAML file harness reads refuses aliases: a billion-laughs file is one line naming it, at once."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core.errors import InputError
from harness.core.yaml_safe import dump_yaml, load_yaml
from harness.records.run_folder import RunFolder
from tests.inputs.test_bad_input import assert_rejected

ALIASED = "first: &shared {input: 1, output: 2}\nsecond: *shared\n"


def billion_laughs(key: str) -> str:
    """Nine levels of nine aliases: 9**9 strings once anything walks it."""
    lines = [f"{key}:", '  l0: &l0 "lol"']
    lines += [f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def test_a_billion_laughs_config_is_refused_at_once_with_one_line(tmp_path):
    config = tmp_path / "bomb.yaml"
    config.write_text(billion_laughs("model_aliases"))
    started = time.monotonic()
    outcome = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "--config",
            str(config),
            "--model",
            "oracle",
            "--domain",
            "mini",
            "--tasks-dir",
            str(tmp_path / "tasks"),
            "--results-dir",
            str(tmp_path / "results"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_memory,
        cwd=Path(__file__).parents[2],
    )
    assert outcome.returncode == 2, outcome.stderr[-2000:]
    message = (outcome.stdout + outcome.stderr).strip()
    assert len(message.splitlines()) == 1, message
    assert f"{config}:3: invalid YAML: aliases are not allowed (found *l0)" in message
    assert time.monotonic() - started < 30
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    ("flag", "file_name", "text"),
    [
        ("--config", "config.yaml", "model_aliases:\n  fast: &fast openai/gpt-4o\n  quick: *fast\n"),
        ("--sweep", "sweep.yaml", "- &one oracle\n- *one\n"),
        ("--prompts", "prompts.yaml", "system: &text 'You answer.'\ninstance: *text\n"),
        ("--model", "script.yaml", "- &reply {text: '<answer>42</answer>'}\n- *reply\n"),
    ],
)
def test_every_yaml_input_refuses_an_alias(mini, flag, file_name, text):
    path = mini.root / file_name
    path.write_text(text)
    value = f"scripted:{path}" if flag == "--model" else str(path)
    arguments = [flag, value] if flag in ("--model", "--sweep") else ["--model", "oracle", flag, value]
    assert_rejected(mini.run(*arguments), str(path), "aliases are not allowed")


def test_a_prices_file_refuses_an_alias(mini, capsys):
    assert mini.run("--model", "oracle").exit_code == 0
    prices = mini.root / "prices.yaml"
    prices.write_text("openai/x: &rates {input: 1, output: 2}\nopenai/y: *rates\n")
    code = main(["report", str(mini.results_dir / "run"), "--prices", str(prices), "--out", str(mini.root / "r")])
    message = capsys.readouterr().err.strip()
    assert code == 2 and len(message.splitlines()) == 1, message
    assert f"{prices}:2: invalid YAML: aliases are not allowed (found *rates)" in message
    assert not (mini.root / "r").exists()


def test_a_model_arg_refuses_an_alias(mini, openai_key):
    outcome = mini.run(
        "--model",
        "openai/test",
        "--api-base",
        "http://127.0.0.1:9/v1",
        "--context-window",
        "9000",
        "--model-arg",
        "extra=[&a x, *a]",
    )
    assert_rejected(outcome, "--model-arg extra", "aliases are not allowed")


def test_a_run_record_with_a_billion_laughs_is_refused_and_an_older_record_with_aliases_is_read(tmp_path):
    bomb = tmp_path / "bomb"
    bomb.mkdir()
    (bomb / "run.yaml").write_text(billion_laughs("config"))
    started = time.monotonic()
    with pytest.raises(InputError, match=r"run\.yaml: invalid YAML: more than 100000 values once aliases expand"):
        RunFolder(bomb).read_record()
    assert time.monotonic() - started < 5
    older = RunFolder(Path(__file__).parents[1] / "fixtures" / "schema2_run").read_record()  # written with &id001
    assert older.model == older.protocol.model_settings
    assert older.model is not None and older.model.model_dump() == {"model": "scripted:/tmp/s2/script.yaml"}


def test_a_record_is_written_without_anchors_where_one_object_appears_twice():
    shared = {"model": "openai/x", "args": {"seed": 1}}
    text = dump_yaml({"model_settings": shared, "model": shared})
    assert "&" not in text and "*" not in text
    assert load_yaml(text, "run.yaml") == {"model_settings": shared, "model": shared}

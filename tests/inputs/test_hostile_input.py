"""Careless or hostile input files: each is one line naming file, line and field, exit 2, nothing written."""

from __future__ import annotations

import json

import pytest

from tests.inputs.test_bad_input import GOOD, assert_rejected, write_tasks


def test_a_prompt_template_using_an_unknown_variable_is_refused_when_it_loads(mini):
    from harness.inputs.prompts import DEFAULT_PROMPTS

    custom = mini.root / "prompts.yaml"
    custom.write_text(DEFAULT_PROMPTS.read_text().replace("You are a careful research analyst.", "Hi {{ nmae }}."))
    assert_rejected(mini.run("--model", "oracle", "--prompts", str(custom)), "prompts.yaml", "field 'system'", "nmae")


@pytest.mark.parametrize("kind", ["config", "prompts", "script"])
def test_invalid_utf8_in_an_input_file_is_one_line_naming_its_line(mini, kind):
    path = mini.root / f"{kind}.yaml"
    path.write_bytes(b"# fine\n# fine too\nsystem: caf\xe9\n")
    flags = {
        "config": ["--model", "oracle", "--config", str(path)],
        "prompts": ["--model", "oracle", "--prompts", str(path)],
        "script": ["--model", f"scripted:{path}"],
    }[kind]
    assert_rejected(mini.run(*flags), f"{kind}.yaml:3:", "invalid UTF-8")


@pytest.mark.parametrize(
    ("row", "fragments"),
    [
        (GOOD | {"rel_tol": float("nan")}, ("field 'rel_tol'", "finite")),
        (GOOD | {"rel_tol": -0.01}, ("field 'rel_tol'",)),
        (GOOD | {"id": "x" * 300}, ("field 'id'", "300 characters")),
        (GOOD | {"id": "t\x1b[2J1"}, ("field 'id'", "control characters")),
    ],
)
def test_bad_task_values_are_refused(mini, row, fragments):
    write_tasks(mini, json.dumps(row))
    assert_rejected(mini.run("--model", "oracle"), "mini.jsonl:1:", *fragments)


def test_a_task_line_nested_too_deeply_is_one_line(mini):
    write_tasks(mini, json.dumps(GOOD), "[" * 100_000)
    assert_rejected(mini.run("--model", "oracle"), "mini.jsonl:2:", "malformed JSON")


def test_invalid_utf8_in_a_task_file_names_its_line(mini):
    (mini.tasks_dir / "mini.jsonl").write_bytes(json.dumps(GOOD).encode() + b'\n{"id": "t\xff"}\n')
    assert_rejected(mini.run("--model", "oracle"), "mini.jsonl:2:", "invalid UTF-8")


@pytest.mark.parametrize("domain", ["..", ".", "../tasks", "a/b", "x" * 70, "mi\x1bni"])
def test_a_domain_that_is_not_a_plain_name_is_refused(mini, domain):
    (mini.tasks_dir / "...jsonl").write_text(json.dumps(GOOD | {"domain": ".."}) + "\n")
    assert_rejected(mini.run("--model", "oracle", "--domain", domain), "--domain")


def test_a_task_file_named_like_a_path_is_not_a_domain_of_all(mini):
    (mini.tasks_dir / "...jsonl").write_text(json.dumps(GOOD | {"domain": ".."}) + "\n")
    outcome = mini.run("--model", "oracle", "--domain", "all")
    assert outcome.exit_code == 0
    assert {row["domain"] for row in outcome.rows} == {"mini"}
    kept = sorted(p.name for p in outcome.run_dir.iterdir())
    assert kept == [".lock", "episodes", "results.jsonl", "run.yaml", "summary.json"]


@pytest.mark.parametrize("run_id", [".", "..", ".hidden", "r" * 300, "a/b"])
def test_a_run_id_that_is_not_a_plain_name_is_refused(mini, run_id):
    outcome = mini.run("--model", "oracle", run_id=run_id)
    assert outcome.exit_code == 2 and "--run-id" in outcome.output
    assert not mini.results_dir.exists()


def test_a_collection_file_name_that_is_not_utf8_is_one_line(mini):
    import os

    os.close(os.open(os.fsencode(mini.root / "collections" / "mini") + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY))
    assert_rejected(mini.run("--model", "oracle"), "collections/mini", "not UTF-8")


def test_task_ids_that_sanitise_alike_get_their_own_trajectories(mini):
    ids = ["a/b", "a_b", "é", "ü", "x" * 150, "x" * 150 + "y"]
    write_tasks(mini, *(json.dumps(GOOD | {"id": task_id}) for task_id in ids))
    outcome = mini.run("--model", "oracle", "--workers", "3")
    assert outcome.exit_code == 0 and sorted(row["task_id"] for row in outcome.rows) == sorted(ids)
    files = list((outcome.run_dir / "episodes" / "mini").glob("*.jsonl"))
    assert len(files) == len(ids)
    logged = {json.loads(path.read_text().splitlines()[0])["task_id"] for path in files}
    assert logged == set(ids)

"""Bad input: one clear line naming file, line and field; exit code 2; nothing written under results/."""

from __future__ import annotations

import json

import pytest

GOOD = {"id": "t1", "domain": "mini", "question": "Q?", "answer": "42", "solution": "echo 42"}


def write_tasks(mini, *lines: str) -> None:
    (mini.tasks_dir / "mini.jsonl").write_text("".join(line + "\n" for line in lines))


def assert_rejected(outcome, *fragments: str) -> None:
    assert outcome.exit_code == 2
    message = outcome.output.strip()
    assert message.startswith("error:") and len(message.splitlines()) == 1, message
    for fragment in fragments:
        assert fragment in message
    assert not outcome.run_dir.exists()


@pytest.mark.parametrize(
    ("second_line", "fragments"),
    [
        ('{"id": "t2", "domain": ', ("mini.jsonl:2:", "malformed JSON")),
        (json.dumps({k: v for k, v in GOOD.items() if k != "question"} | {"id": "t2"}), (":2:", "field 'question'")),
        (json.dumps(GOOD | {"id": "t2", "answer": "12,3.4"}), (":2:", "field 'answer'", "not a number")),
        (json.dumps(GOOD | {"id": "t2", "answer": "12.50%", "answer_format": "x.xxx%"}), (":2:", "field 'answer'")),
        (json.dumps(GOOD), (":2:", "field 'id'", "duplicate id 't1'")),
        (json.dumps(GOOD | {"id": "t2", "domain": "law"}), (":2:", "field 'domain'")),
        (json.dumps(GOOD | {"id": "t2", "grader": "vibes"}), (":2:", "field 'grader'")),
        (json.dumps(GOOD | {"id": "t2", "answr": "1"}), (":2:", "field 'answr'", "unknown field")),
    ],
)
def test_bad_task_line_is_reported_with_file_line_and_field(mini, second_line, fragments):
    write_tasks(mini, json.dumps(GOOD), second_line)
    assert_rejected(mini.run("--model", "oracle"), *fragments)


@pytest.mark.parametrize(
    ("cut_line", "said"),
    [
        (
            '{"id": "t2", "question": "How many units in 2020',
            "the line ends inside the string that starts at column 26",
        ),
        ('{"id": "t2", "domain": "mini", "answer": 42', "the line ends before its JSON does"),
    ],
)
def test_a_cut_off_task_line_says_where_it_was_cut(mini, cut_line, said):
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(GOOD) + "\n" + cut_line)  # as a full disk leaves it
    assert_rejected(mini.run("--model", "oracle"), f"mini.jsonl:2: malformed JSON: {said}")


def test_a_task_line_cut_inside_a_character_counts_its_column_in_characters(mini):
    cut = ('{"id": "t2", "question": "营收是多少').encode()[:-1]  # the last character's last byte lost
    (mini.tasks_dir / "mini.jsonl").write_bytes(json.dumps(GOOD).encode() + b"\n" + cut)
    assert_rejected(mini.run("--model", "oracle"), "mini.jsonl:2: invalid UTF-8 (byte 0xe5 at column 31)", "cut off?")


def test_unknown_domain(mini):
    outcome = mini.run("--model", "oracle", "--domain", "law")
    assert_rejected(outcome, "unknown domain 'law'", "law.jsonl", "known: mini")


def test_missing_collection_folder(mini):
    (mini.root / "collections" / "mini" / "ledger.md").unlink()
    (mini.root / "collections" / "mini" / "decoy.md").unlink()
    (mini.root / "collections" / "mini").rmdir()
    assert_rejected(mini.run("--model", "oracle"), "collections/mini", "not found")


def test_no_usable_bwrap(mini, monkeypatch, tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("HARNESS_BWRAP", str(fake))
    assert_rejected(mini.run("--model", "oracle"), "--sandbox local", "cannot start a sandbox")


def test_no_usable_bwrap_in_a_container_says_what_to_do_instead(mini, monkeypatch, tmp_path):
    from harness.sandboxes.local import sandbox

    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n")
    fake.chmod(0o755)
    (tmp_path / ".dockerenv").write_text("")
    monkeypatch.setattr(sandbox, "_CONTAINER_MARKERS", (str(tmp_path / ".dockerenv"),))
    monkeypatch.setenv("HARNESS_BWRAP", str(fake))
    outcome = mini.run("--model", "oracle")
    assert_rejected(outcome, "--sandbox local", "cannot start a sandbox")
    assert outcome.output.rstrip().endswith("run on the host or in a VM, or use --sandbox docker from there")


def test_oracle_needs_a_solution(mini):
    write_tasks(mini, json.dumps({k: v for k, v in GOOD.items() if k != "solution"}))
    assert_rejected(mini.run("--model", "oracle"), "mini.jsonl", "task 't1'", "field 'solution'")


def test_bad_scripted_model_file(mini):
    script = mini.root / "script.yaml"
    script.write_text("- bash: 1\n")
    assert_rejected(mini.run("--model", f"scripted:{script}"), "script.yaml", "item 1")


def test_unknown_model(mini):
    assert_rejected(mini.run("--model", "nonsense"), "--model", "nonsense")


def test_docker_without_engine_or_image(mini):
    outcome = mini.run("--model", "oracle", "--sandbox", "docker", "--image", "harness-sandbox:no-such-tag")
    assert_rejected(outcome, "--sandbox docker")
    assert "not found" in outcome.output or "no Docker engine" in outcome.output


def test_e2b_without_api_key_names_the_variable(mini, monkeypatch):
    monkeypatch.delenv("E2B_API_KEY", raising=False)
    assert_rejected(mini.run("--model", "oracle", "--sandbox", "e2b"), "E2B_API_KEY")


def test_unknown_task_id(mini):
    assert_rejected(mini.run("--model", "oracle", "--task-id", "nope"), "--task-id", "'nope'")


def test_bad_config_file_names_file_line_and_field(mini):
    config = mini.root / "run.yaml"
    config.write_text("model: oracle\nmax_turns: lots\n")
    assert_rejected(mini.run("--config", str(config)), "run.yaml:2", "field 'max_turns'", "'lots'")
    config.write_text("model: oracle\n\nmax_turnz: 5\n")
    assert_rejected(mini.run("--config", str(config)), "run.yaml:3", "field 'max_turnz'", "unknown setting")


def test_resuming_under_a_different_protocol_is_refused(mini):
    assert mini.run("--model", "oracle").exit_code == 0
    again = mini.run("--model", "oracle", "--max-turns", "5")
    assert again.exit_code == 2 and "max_turns 200 -> 5" in again.output and "--allow-protocol-change" in again.output
    assert len(again.rows) == 1

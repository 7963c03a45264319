"""`annotate`: the five failure modes of wrong episodes by a judge panel over real HTTP (the local test server
plays the judge), stored beside the results; condensed trajectories; rule-judge agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.analysis.mode_agreement import cohen_kappa
from harness.cli.main import main
from harness.diagnostics.condensed import condense
from harness.diagnostics.mode_prompt import DEFINITIONS, PROMPT_DIGEST, parse_labels
from harness.records.events import ActionEvent, ModelCallEvent, ObservationEvent
from tests.helpers.openai_server import fault, reply
from tests.interop.test_mini_swe_agent import two_tasks

REPO = Path(__file__).resolve().parents[2]
LABELS = {
    "labels": [
        {"mode": "evidence_misidentification", "turn": 1, "reason": "read the wrong row"},
        {"mode": "hallucination", "turn": 2, "reason": "41 is in no output"},
    ]
}


def annotate(mini, server, run_dir) -> int:
    code = main(["annotate", str(run_dir), "--judge", "openai/judge-a", "--judge-api-base", server.url])
    mini.capsys.readouterr()
    return code


def test_annotate_stores_labels_caches_them_and_a_malformed_reply_fails_only_its_episode(
    mini, openai_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    two_tasks(mini)  # t1 "Units in total?" (gold 42), t2 "Units in 2021?" (gold 2), both with evidence ledger.md
    replies = [{"bash": "cat /workspace/documents/ledger.md"}, "<answer>41</answer>"]
    run = mini.run("--model", mini.script(replies), "--epochs", "2")
    assert run.exit_code == 0 and [row["verdict"] for row in run.rows] == ["wrong_value"] * 4
    results_before = (run.run_dir / "results.jsonl").read_bytes()
    malformed = {"t2"}

    def judge(body: dict) -> object:
        prompt = body["messages"][0]["content"]
        assert "$ cat /workspace/documents/ledger.md" in prompt and "Reference answer:" in prompt
        return reply("not json {" if "Units in 2021?" in prompt and malformed else json.dumps(LABELS))

    openai_server.respond = judge
    assert annotate(mini, openai_server, run.run_dir) == 0
    # t1's two epochs logged the same trajectory: the second is the first's cached reply; t2's malformed
    # replies are not cached, so each of its epochs was asked
    assert len(openai_server.requests) == 3
    labels = {(e["task_id"], e["epoch"]): e for e in map(json.loads, (run.run_dir / "failure_labels.jsonl").open())}
    assert set(labels) == {("t1", 1), ("t1", 2), ("t2", 1), ("t2", 2)}
    assert labels[("t1", 1)]["status"] == "labelled" and labels[("t1", 2)]["status"] == "labelled"
    assert (labels[("t1", 1)]["calls"], labels[("t1", 2)]["calls"]) == (
        {"made": 1, "cached": 0},
        {"made": 0, "cached": 1},
    )
    assert labels[("t1", 1)]["modes"] == {"evidence_misidentification": 1, "hallucination": 2}
    assert (
        labels[("t1", 1)]["prompt"] == PROMPT_DIGEST and labels[("t1", 1)]["rule_mode"] == "evidence_misidentification"
    )
    assert [labels[("t2", e)]["status"] for e in (1, 2)] == ["judge_error", "judge_error"]
    assert labels[("t2", 1)]["judges"][0]["failure"] == "JUDGE_MALFORMED" and labels[("t2", 1)]["modes"] == {}
    assert (run.run_dir / "results.jsonl").read_bytes() == results_before  # labels beside, never in, the results

    malformed.clear()  # the judge now answers t2 too: only t2 is asked again (once), the rest is cached
    assert annotate(mini, openai_server, run.run_dir) == 0
    assert len(openai_server.requests) == 4
    assert annotate(mini, openai_server, run.run_dir) == 0
    assert len(openai_server.requests) == 4  # a second annotate of the same episodes makes no call
    labels = [json.loads(line) for line in (run.run_dir / "failure_labels.jsonl").open()]
    assert {e["status"] for e in labels} == {"labelled"} and {e["calls"]["cached"] for e in labels} == {1}

    out = mini.root / "report"
    assert main(["report", str(run.run_dir), "--out", str(out)]) == 0
    mini.capsys.readouterr()
    markdown = (out / "report.md").read_text()
    assert "## Failure modes by a judge panel (`annotate`)" in markdown and "Cohen's kappa" in markdown
    assert "| evidence_misidentification | 4 | 0 | 0 | 0 | – |" in markdown  # all agree: chance is certain
    assert "judge labels from `annotate`" in markdown


def test_a_judge_that_takes_no_temperature_is_asked_again_without_it(mini, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    two_tasks(mini)
    run = mini.run("--model", mini.script(["<answer>41</answer>"]), "--task-id", "t1")
    labels = {"labels": [{"mode": "hallucination", "turn": 1, "reason": "41 is in no output"}]}
    openai_server.push(fault(400, "Unsupported value: 'temperature' does not support 0"), reply(json.dumps(labels)))
    assert annotate(mini, openai_server, run.run_dir) == 0
    first, second = openai_server.requests
    assert first["temperature"] == 0 and "temperature" not in second
    [label] = map(json.loads, (run.run_dir / "failure_labels.jsonl").open())
    assert (label["status"], label["modes"]) == ("labelled", {"hallucination": 1}), label


def test_annotate_refuses_a_folder_that_is_no_run(mini, openai_server, tmp_path):
    code = main(["annotate", str(tmp_path), "--judge", "openai/judge-a", "--judge-api-base", openai_server.url])
    assert code == 2 and "not a run folder (no run.yaml)" in mini.capsys.readouterr().err
    assert not (tmp_path / "failure_labels.jsonl").exists() and not openai_server.requests


def test_condensed_trajectory_keeps_commands_whole_and_cuts_outputs_saying_their_size():
    command = "python3 -c 'print(1)' # " + "x" * 300
    events = [
        e
        for t in range(1, 4)
        for e in (
            ModelCallEvent(turn=t, messages=[], response={"text": "looking"}),
            ActionEvent(turn=t, command=command),
            ObservationEvent(
                turn=t,
                exit_code=0,
                stdout="y" * 50_000,
                stderr="",
                timed_out=False,
                truncated=False,
                raw_bytes=50_000,
                duration_s=None,
                text="",
            ),
        )
    ]
    text = condense(events, 8_000)
    assert len(text) <= 8_000 and text.count(command) == 3
    assert "stdout: 50,000 characters" in text and "(raw output 50,000 bytes)" in text
    tiny = condense(events, 1_000)  # commands alone overflow: the middle is left out and counted
    assert len(tiny) <= 1_000 + 200 and "log entries" in tiny and "left out" in tiny


def test_label_replies_must_be_strict_json_with_known_modes_and_turns():
    assert parse_labels(json.dumps(LABELS), turns=2) is not None
    assert parse_labels("```json\n" + json.dumps(LABELS) + "\n```", turns=2) is not None
    unknown_mode = {"labels": [{"mode": "guess", "turn": 1}]}
    late_turn = json.dumps(LABELS).replace('"turn": 2', '"turn": 9')
    twice = {"labels": [LABELS["labels"][0]] * 2}
    for bad in (
        "",
        "labels: hallucination",
        json.dumps({"labels": []}),
        json.dumps(unknown_mode),
        late_turn,
        json.dumps(twice),
    ):
        assert parse_labels(bad, turns=2) is None, bad


def test_cohen_kappa_equals_statsmodels():
    from statsmodels.stats.inter_rater import cohens_kappa

    first = [True, True, False, False, True, False, True, True, False, False]
    second = [True, False, False, False, True, True, True, True, False, True]
    pairs = list(zip(first, second, strict=True))
    table = [
        [pairs.count((True, True)), pairs.count((True, False))],
        [pairs.count((False, True)), pairs.count((False, False))],
    ]
    assert cohen_kappa(first, second) == pytest.approx(cohens_kappa(table).kappa)
    assert cohen_kappa([True, True], [True, True]) is None


def test_the_prompts_definitions_are_the_documented_ones():
    documented = (REPO / "docs" / "FAILURE_MODES.md").read_text()
    for mode, definition in DEFINITIONS.items():
        assert f"**{mode}**: {definition}" in " ".join(documented.split())


def test_a_trajectory_cannot_pull_the_reference_into_the_prompt_twice():
    from harness.diagnostics.mode_prompt import mode_prompt

    prompt = mode_prompt("Q?", "GOLD-7", "status answered", "$ echo '<<REFERENCE>> <<QUESTION>>'")
    assert prompt.count("GOLD-7") == 1 and "$ echo '<<REFERENCE>> <<QUESTION>>'" in prompt


def test_a_hand_edited_label_file_is_one_line_naming_line_and_field(mini):
    run = mini.run("--model", mini.script(["<answer>41</answer>"]))
    (run.run_dir / "failure_labels.jsonl").write_text('{"domain": "mini", "task_id": "t1"}\n')
    code = main(["report", str(run.run_dir), "--out", str(mini.root / "report")])
    err = mini.capsys.readouterr().err
    assert code == 2 and f"{run.run_dir}/failure_labels.jsonl:1: field 'epoch': missing" in err
    assert not (mini.root / "report").exists()

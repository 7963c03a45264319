"""`--closed-book`: the same tasks, loop and budgets with an empty /workspace/documents, on every backend; the
report's and the leakage check's closed-book comparison."""

from __future__ import annotations

import csv

import yaml

from harness.cli.main import main
from harness.inputs.config import RunConfig
from harness.run.planning.plan import default_run_id
from tests.conftest import REPO
from tests.sandboxes.test_backends import fake_sdk  # noqa: F401  (a fixture)

COUNT_DOCUMENTS = [{"bash": "ls -A /workspace/documents | wc -l; touch /workspace/documents/x"}, "<answer>42</answer>"]


def documents_seen(outcome) -> tuple[str, str]:
    [observation] = [event for event in outcome.trajectory("t1") if event["event"] == "observation"]
    return observation["stdout"].strip(), observation["stderr"]


def test_a_closed_book_sandbox_has_an_empty_read_only_documents_folder_and_the_protocol_says_so(mini):
    normal = mini.run("--model", mini.script(COUNT_DOCUMENTS), run_id="normal")
    closed = mini.run("--model", mini.script(COUNT_DOCUMENTS), "--closed-book", run_id="closed")
    assert documents_seen(normal)[0] == "2" and documents_seen(closed)[0] == "0"
    assert "Read-only file system" in documents_seen(closed)[1]
    record = yaml.safe_load((closed.run_dir / "run.yaml").read_text())
    assert record["protocol"]["closed_book"] is True and record["sandbox"]["documents"] == "empty (--closed-book)"
    assert "closed_book" not in yaml.safe_load((normal.run_dir / "run.yaml").read_text())["protocol"]
    start = closed.trajectory("t1")[0]
    assert start["config_hash"] != normal.trajectory("t1")[0]["config_hash"]
    assert closed.rows[0]["verdict"] == "correct"  # graded as any run: the gold is 42


def test_resuming_a_closed_book_run_without_the_flag_is_refused(mini):
    assert mini.run("--model", "oracle", "--closed-book", run_id="closed").exit_code == 0
    again = mini.run("--model", "oracle", run_id="closed")
    assert again.exit_code == 2 and "closed_book True -> None" in again.output


def test_a_closed_book_run_has_a_run_id_of_its_own():
    config = RunConfig(model="oracle", domain="demo", closed_book=True)
    assert default_run_id(config).endswith("_oracle_demo_closed-book")
    assert not default_run_id(RunConfig(model="oracle", domain="demo")).endswith("closed-book")


def test_the_oracle_answers_nothing_of_the_demo_closed_book(tmp_path, capsys):
    arguments = [
        "--model",
        "oracle",
        "--domain",
        "demo",
        "--tasks-dir",
        str(REPO / "tasks"),
        "--collections-dir",
        str(REPO / "collections"),
        "--results-dir",
        str(tmp_path),
    ]
    assert main([*arguments, "--run-id", "open"]) == 0
    assert main([*arguments, "--run-id", "closed", "--closed-book"]) == 0
    capsys.readouterr()
    from harness.records.run_folder import RunFolder

    normal, closed = (RunFolder(tmp_path / name).latest_rows() for name in ("open", "closed"))
    assert len(closed) == len(normal) == 13
    assert all(row.is_correct() for row in normal.values())
    assert not any(row.is_correct() for row in closed.values())


def test_report_lists_tasks_answered_from_the_question_alone(mini):
    import json

    tasks = [
        {"id": "t1", "domain": "mini", "question": "Six times seven?", "answer": "42"},
        {"id": "t2", "domain": "mini", "question": "Units in 2021?", "answer": "2"},
    ]
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    script = mini.script(["<answer>42</answer>"])  # answers every task 42: right for t1 without any document
    normal = mini.run("--model", script, run_id="normal")
    closed = mini.run("--model", script, "--closed-book", run_id="closed")
    assert (normal.exit_code, closed.exit_code) == (0, 0)
    out = mini.root / "report"
    assert main(["report", str(normal.run_dir), str(closed.run_dir), "--out", str(out)]) == 0
    report = (out / "report.md").read_text()
    label = f"{script} (closed-book)"
    assert "## Closed-book control" in report and f"### {script}\n" in report and label in report
    assert "1 of 2 tasks answered correctly closed-book" in report and "Answered closed-book: mini/t1" in report
    assert "50.0% over all 2 episodes; 0.0% over the 1 episodes of the tasks left once those are out" in report
    assert "| mini | 2 | 1 | 50.0% |" in report
    assert list(csv.reader((out / "closed_book.csv").open())) == [
        ["model", "domain", "task_id"],
        [script, "mini", "t1"],
    ]
    mini.capsys.readouterr()
    leakage = [
        "leakage",
        "--domain",
        "mini",
        "--tasks-dir",
        str(mini.tasks_dir),
        "--collections-dir",
        str(mini.root / "collections"),
    ]
    assert main([*leakage, "--closed-book", str(closed.run_dir)]) == 1
    output = mini.capsys.readouterr().out
    assert "mini/t1: answered correctly closed-book" in output and "1 answered closed-book" in output
    assert main([*leakage, "--closed-book", str(normal.run_dir)]) == 2
    assert "needs a run made with --closed-book" in mini.capsys.readouterr().err


def test_a_closed_book_docker_container_has_an_empty_documents_folder(mini, docker_image, docker_starts):
    _, image = docker_image
    outcome = mini.run(
        "--model", mini.script(COUNT_DOCUMENTS), "--closed-book", "--sandbox", "docker", "--image", image
    )
    assert outcome.exit_code == 0, outcome.output
    assert documents_seen(outcome)[0] == "0" and "Read-only file system" in documents_seen(outcome)[1]
    # the tools checked in the image check's container, as without the flag
    assert docker_starts == ["probe", "mini-t1"]


def test_a_closed_book_e2b_run_needs_and_uses_the_template_without_documents(mini, fake_sdk):  # noqa: F811
    from harness.sandboxes.e2b.templates import TemplateResources, template_name

    refused = mini.run("--model", mini.script(COUNT_DOCUMENTS), "--closed-book", "--sandbox", "e2b", run_id="e2b")
    assert refused.exit_code == 2 and "sandbox build e2b --closed-book" in refused.output
    assert main(["sandbox", "build", "e2b", "--closed-book"]) == 0
    assert fake_sdk.builds[-1]["name"] == template_name("closed-book", TemplateResources(2, 4096))
    outcome = mini.run("--model", mini.script(COUNT_DOCUMENTS), "--closed-book", "--sandbox", "e2b", run_id="e2b")
    assert outcome.exit_code == 0, outcome.output
    assert documents_seen(outcome)[0] == "0"
    recorded = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["sandbox"]["templates"]["mini"]
    assert recorded.startswith(template_name("closed-book", TemplateResources(2, 4096)) + ":")


def test_closed_book_is_a_setting_of_the_config_file_too(mini):
    config = mini.root / "closed.yaml"
    config.write_text("closed-book: true\n")
    outcome = mini.run("--model", mini.script(COUNT_DOCUMENTS), "--config", str(config), run_id="from-config")
    assert documents_seen(outcome)[0] == "0"


def test_the_report_and_leakage_count_a_task_over_epochs_alike():
    """Keyed by (task, epoch): a task correct closed-book in one epoch of two is answerable, whichever epoch was
    read last; the normal run's accuracy is over its episodes."""
    from harness.analysis.closed_book import comparisons
    from harness.analysis.runs import CLOSED_BOOK_SUFFIX, ModelRow
    from harness.records.results import ResultRow

    def row(task_id: str, epoch: int, correct: bool) -> ResultRow:
        verdict = "correct" if correct else "wrong_value"
        fields = {"task_id": task_id, "domain": "d", "status": "answered", "answer": "1", "reasons": []}
        fields |= {"verdict": verdict, "verdict_strict": verdict, "verdict_lenient": verdict, "unit": None}
        fields |= {"correct_at_tolerance": None, "parsed_value": None, "turns": 1, "duration_s": 1.0}
        fields |= {"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "reasoning_tokens": 0}
        fields |= {"cost_usd": None, "detail": None, "grader_version": "x", "epoch": epoch}
        return ResultRow.from_dict(fields)

    closed = [row("t1", 1, True), row("t1", 2, False), row("t2", 1, False), row("t2", 2, False)]
    normal = [row("t1", 1, True), row("t1", 2, True), row("t2", 1, True), row("t2", 2, False)]
    rows = [ModelRow("m" + CLOSED_BOOK_SUFFIX, r) for r in closed] + [ModelRow("m", r) for r in normal]
    [found] = comparisons(rows)
    assert found.answerable == [("d", "t1")]
    assert (found.correct_all, found.episodes, found.correct_without, found.kept) == (3, 4, 1, 2)

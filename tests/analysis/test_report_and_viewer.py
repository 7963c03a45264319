"""Reports: tables, intervals, paired comparison, plots."""

from __future__ import annotations

import csv
import json

from harness.analysis.report import paired_counts
from harness.analysis.stats import mcnemar_exact, wilson_interval
from harness.cli.main import main


def two_domain_project(mini):
    """mini (2 tasks) and misc (1 task), so tables have several domains."""
    mini_tasks = [{"id": f"t{i}", "domain": "mini", "question": f"Q{i}?", "answer": "42"} for i in (1, 2)]
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps(task) + "\n" for task in mini_tasks))
    misc_task = {"id": "m1", "domain": "misc", "question": "Q?", "answer": "7"}
    (mini.tasks_dir / "misc.jsonl").write_text(json.dumps(misc_task) + "\n")
    (mini.root / "collections" / "misc").mkdir()
    (mini.root / "collections" / "misc" / "a.md").write_text("seven\n")


def run_all(mini, replies, run_id):
    return mini.run("--model", mini.script(replies), "--domain", "mini,misc", run_id=run_id)


def test_wilson_interval_and_mcnemar():
    low, high = wilson_interval(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson_interval(0, 0) == (0.0, 0.0)
    assert wilson_interval(5, 5)[1] == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    assert round(mcnemar_exact(1, 9), 4) == 0.0215


def test_report_merges_models_into_tables_csv_and_plots(mini):
    two_domain_project(mini)
    good = run_all(mini, [{"bash": "true"}, "<answer>42</answer>"], "good")
    bad = run_all(mini, ["<answer>41</answer>"], "bad")
    assert good.exit_code == bad.exit_code == 0
    out = mini.root / "report"
    assert main(["report", str(good.run_dir), str(bad.run_dir), "--out", str(out)]) == 0
    mini.capsys.readouterr()
    markdown = (out / "report.md").read_text()
    assert "## Accuracy (default), % with 95% Wilson interval" in markdown
    assert "| mini | 100.0 [34.2, 100.0] (n=2) | 0.0 [0.0, 65.8] (n=2) |" in markdown
    assert "## Paired comparison" in markdown and "only scripted" in markdown
    rows = list(csv.DictReader((out / "accuracy.csv").open()))
    by_key = {(row["model"].split("/")[-1], row["domain"]): row for row in rows}
    good_name = next(key[0] for key in by_key if by_key[key]["correct_default"] == "2")
    assert by_key[(good_name, "all")]["accuracy_default"] == "0.666667"
    assert by_key[(good_name, "misc")]["answered"] == "1"
    for image in ("accuracy_per_domain.png", "residuals.png", "submission_turns.png"):
        assert (out / image).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    paired = list(csv.DictReader((out / "paired.csv").open()))
    assert len(paired) == 1 and {paired[0]["only_first"], paired[0]["only_second"]} == {"0", "2"}


def test_report_of_shards_merges_them(mini):
    two_domain_project(mini)
    model = mini.script(["<answer>42</answer>"])
    first = mini.run("--model", model, "--domain", "mini,misc", "--shard", "1/2", run_id="s1")
    second = mini.run("--model", model, "--domain", "mini,misc", "--shard", "2/2", run_id="s2")
    assert len(first.rows) + len(second.rows) == 3
    out = mini.root / "merged"
    assert main(["report", str(first.run_dir), str(second.run_dir), "--out", str(out)]) == 0
    mini.capsys.readouterr()
    rows = {row["domain"]: row for row in csv.DictReader((out / "accuracy.csv").open())}
    assert rows["all"]["n"] == "3"


def test_report_gives_the_rate_of_each_reason_code(mini):
    two_domain_project(mini)
    outcome = run_all(mini, ["<answer>about 42</answer>"], "hedged")
    assert [row["reasons"] for row in outcome.rows] == [["HEDGE"]] * 3  # misc's gold is 7: wrong, still hedged
    out = mini.root / "report"
    assert main(["report", str(outcome.run_dir), "--out", str(out)]) == 0
    mini.capsys.readouterr()
    assert "| HEDGE | 100.0 (3) |" in (out / "report.md").read_text()
    rows = {(row["domain"], row["reason"]): row for row in csv.DictReader((out / "reasons.csv").open())}
    assert (rows[("all", "HEDGE")]["episodes"], rows[("mini", "HEDGE")]["rate"]) == ("3", "1.0")


def test_results_row_holds_the_output_record_of_the_grading_specification(mini):
    """docs/GRADING.md §2.7: verdicts in three modes, reasons, tag content, parsed value, unit, grader version."""
    task = {"id": "t1", "domain": "mini", "question": "Q?", "answer": "-1.50 pp"}
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    [row] = mini.run("--model", mini.script(["<answer>(1.5) p.p.</answer>"])).rows
    assert {key: row[key] for key in ("answer", "parsed_value", "unit", "verdict", "verdict_strict", "reasons")} == {
        "answer": "(1.5) p.p.",
        "parsed_value": "-1.5",
        "unit": "pp",
        "verdict": "correct",
        "verdict_strict": "format_violation",
        "reasons": ["DECIMALS", "SIGN_STYLE"],
    }


def result_row(task_id: str, verdict: str):
    from harness.records.results import ResultRow

    return ResultRow.from_dict(
        {
            "task_id": task_id,
            "domain": "d",
            "status": "answered",
            "answer": "1",
            "verdict": verdict,
            "verdict_strict": verdict,
            "verdict_lenient": verdict,
            "reasons": [],
            "correct_at_tolerance": None,
            "parsed_value": "1",
            "turns": 1,
            "duration_s": 1.0,
            "input_tokens": 0,
            "output_tokens": 0,
            "cached_tokens": 0,
            "reasoning_tokens": 0,
            "cost_usd": None,
            "detail": None,
            "grader_version": "v",
        }
    )


def test_paired_counts_use_shared_tasks_only():
    from harness.analysis.runs import ModelRow

    rows = [
        ModelRow("a", result_row("1", "correct")),
        ModelRow("b", result_row("1", "wrong_value")),
        ModelRow("a", result_row("2", "correct")),
    ]
    assert paired_counts(rows, "a", "b") == {"both": 0, "only_first": 1, "only_second": 0, "neither": 0}


def test_report_shows_accuracy_at_tolerance_apart_from_the_headline(mini):
    task = {"id": "t1", "domain": "mini", "question": "Q?", "answer": "100.0", "rel_tol": 0.05}
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    outcome = mini.run("--model", mini.script(["<answer>103.0</answer>"]))
    assert outcome.rows[0]["verdict"] == "wrong_value" and outcome.rows[0]["correct_at_tolerance"] is True
    out = mini.root / "tol"
    assert main(["report", str(outcome.run_dir), "--out", str(out)]) == 0
    mini.capsys.readouterr()
    assert "## accuracy@tol" in (out / "report.md").read_text()
    rows = {row["domain"]: row for row in csv.DictReader((out / "accuracy.csv").open())}
    assert (rows["mini"]["accuracy_at_tol"], rows["mini"]["accuracy_default"]) == ("1.0", "0.0")

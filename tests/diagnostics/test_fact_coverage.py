"""Fact coverage over real HTTP: a scripted agent over imported MuDABench tasks, the local OpenAI-compatible server
as the grading judge and the fact judge. *seen* comes from the logged outputs, *stated* from `annotate --facts`,
and `report` sums both as MuDABench does (cell, row, column, solid)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from harness.analysis.episode_view import episode_view
from harness.cli.main import main
from harness.records.fact_counts import FactCounts
from harness.records.fact_judgments import read_fact_judgments
from harness.records.reading import read_events
from harness.records.results import read_rows
from harness.records.trajectory import read_trajectory
from tests.helpers.browser import viewer_page
from tests.helpers.openai_server import Step, fault, reply
from tests.inputs.test_mudabench_facts_import import run_import, write_pdfs

FIXTURE = Path(__file__).parents[1] / "fixtures" / "mudabench"
DY, PLAY, CMCO = (
    "49fd11e2-19c3-4a8f-96c9-88b5583c657c",
    "4699d11b-1aba-4f06-a750-453bb6c0737c",
    "3d0ffc50-3245-48be-951c-08f53882c790",
)
CHINESE = (
    "ecb07c1f-0a3b-4d98-a3ba-1079c40d9374",
    "92c81e9e-fc35-490a-bc5e-73c6efbbb2fd",
    "32665e4b-8664-4715-8305-2700f0bd0d41",
    "5f0b1c2e-3d4a-4b6c-8e7f-9a0b1c2d3e4f",
)
ENGLISH_SIMPLE, ENGLISH_COMPLEX, TWO_YEAR = (
    "simple-q_3c6e1f0a9b2d4e58",
    "complex-q_3c6e1f0a9b2d4e58",
    "simple-q_257d9e7369a2a4c1",
)
FINAL_REPLY = (
    "DY had total assets of 1,944,165,000 and PLAY 2,352,824,000. Operating costs: 37,363,070,000 (600919, 2021), "
    "37,896,448,000 (600919, 2022), 49,581,000,000 (000001, 2021), 48,437,000,000 (000001, 2022).\n"
    "<answer>PLAY, DY, CMCO</answer>"
)
"""States two of the five English rows and all four Chinese ones."""


def judge(request: dict) -> Step:
    """The grading judge: the simple English and the two-year task are correct. The fact judge: a field is
    supported when the agent's final reply in the record states its reference value (with separators)."""
    prompt = request["messages"][-1]["content"]
    if "Reference answer:" in prompt:
        correct = "What are the stock symbols" in prompt or "极差" in prompt
        return reply(json.dumps({"verdict": "CORRECT" if correct else "INCORRECT", "reason": "-"}))
    fields = json.loads(re.search(r"^Fields \(JSON.*\n(.*)$", prompt, re.MULTILINE).group(1))
    final = prompt.split("## final reply", 1)[-1] if "## final reply" in prompt else ""
    supported = [name for name, cell in fields.items() if f"{int(cell['reference']):,}" in final]
    return reply(json.dumps({"supported": supported}))


@pytest.fixture
def project(tmp_path: Path, capsys) -> Path:
    for split in ("simple", "complex"):
        (tmp_path / f"{split}.json").write_text((FIXTURE / f"{split}.json").read_text(encoding="utf-8"))
    write_pdfs(tmp_path / "pdfs")
    run_import(tmp_path, capsys)
    reads = [DY, PLAY, CMCO, *CHINESE]  # a document another task's set lacks is a failed `cat`
    steps = [{"bash": f"cat documents/documents_{doc}.md"} for doc in reads]
    (tmp_path / "script.json").write_text(json.dumps([*steps, FINAL_REPLY]))
    return tmp_path


def run(project: Path, server, *extra: str) -> int:
    return main(
        [
            "--model",
            f"scripted:{project / 'script.json'}",
            "--domain",
            "mudabench",
            "--tasks-dir",
            str(project / "tasks"),
            "--collections-dir",
            str(project / "collections"),
            "--results-dir",
            str(project / "results"),
            "--run-id",
            "r",
            "--judge",
            "openai/judge",
            "--judge-api-base",
            server.url,
            *extra,
        ]
    )


def annotate(project: Path, server) -> int:
    run_dir = str(project / "results" / "r")
    return main(["annotate", run_dir, "--facts", "--judge", "openai/judge", "--judge-api-base", server.url])


@pytest.fixture
def judged(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_server.respond = judge
    return openai_server


def test_an_episode_reading_three_of_five_documents_sees_three_rows_and_states_two(project, judged, capsys):
    assert run(project, judged, "--task-id", ENGLISH_SIMPLE) == 0, capsys.readouterr().out
    [row] = read_rows(project / "results" / "r" / "results.jsonl")
    assert row.facts_seen == FactCounts(cells=3, cells_total=5, rows=3, rows_total=5, columns=0, columns_total=1)
    assert row.evidence_recall == 0.6 and row.failure_mode is None
    trajectory = project / "results" / "r" / "episodes" / "mudabench" / f"{ENGLISH_SIMPLE}.jsonl"
    events = read_trajectory(trajectory)
    evidence = next(event for event in events if event["event"] == "evidence")
    assert evidence["facts_seen"] == [["values.total_assets_usd"]] * 3 + [[]] * 2
    assert "facts" in events[0]["task"]  # annotate judges against the trajectory's task record
    # With --judge the panel was asked at the episode's end: two of the five rows stated.
    assert row.facts_stated == FactCounts(cells=2, cells_total=5, rows=2, rows_total=5, columns=0, columns_total=1)
    assert evidence["facts_stated"] == [["values.total_assets_usd"], ["values.total_assets_usd"], [], [], []]
    assert len(judged.requests) == 1 + 5  # the grade, and one fact judge per row, as MuDABench asks
    view = episode_view(read_events(trajectory), 30, 600)
    marks = [(row["entity"], row["cells"][0]["seen"], row["cells"][0]["stated"]) for row in view["facts"]]
    assert marks == [
        ("DY", True, True),
        ("PLAY", True, True),
        ("CMCO", True, False),
        ("QMCO", False, False),
        ("OPTT", False, False),
    ]
    shutil.rmtree(project / "results" / ".judge-cache")  # annotate asks again, as after a run without a panel
    grading_calls = len(judged.requests)
    assert annotate(project, judged) == 0
    [one] = read_fact_judgments(project / "results" / "r" / "fact_judgments.jsonl")
    assert one.stated == FactCounts(cells=2, cells_total=5, rows=2, rows_total=5, columns=0, columns_total=1)
    assert one.calls == {"made": 5, "cached": 0} and one.rows_asked == "all"
    fact_prompts = [r["messages"][-1]["content"] for r in judged.requests[grading_calls:]]
    assert len(fact_prompts) == 5 and "1944165000" in fact_prompts[0] and FINAL_REPLY[:40] in fact_prompts[0]
    assert "Reference answer" not in fact_prompts[0]
    shutil.rmtree(project / "results" / ".judge-cache")  # the cheaper option: only documents the agent touched
    asked = len(judged.requests)
    run_dir = str(project / "results" / "r")
    flags = ["--facts-named-only", "--judge", "openai/judge", "--judge-api-base", judged.url]
    assert main(["annotate", run_dir, "--facts", *flags]) == 0
    [one] = read_fact_judgments(project / "results" / "r" / "fact_judgments.jsonl")
    assert (one.calls["made"], one.rows_asked, one.stated.cells) == (3, "named", 2) and len(
        judged.requests
    ) == asked + 3
    assert main(["report", run_dir, "--out", str(project / "report")]) == 0
    assert "stated (named documents only)" in (project / "report" / "report.md").read_text(encoding="utf-8")


def test_a_second_annotate_facts_makes_no_new_calls(project, judged, capsys):
    assert run(project, judged, "--task-id", ENGLISH_SIMPLE) == 0
    shutil.rmtree(project / "results" / ".judge-cache")
    assert annotate(project, judged) == 0
    asked = len(judged.requests)
    assert annotate(project, judged) == 0
    assert len(judged.requests) == asked
    [one] = read_fact_judgments(project / "results" / "r" / "fact_judgments.jsonl")
    assert one.calls == {"made": 0, "cached": 5} and one.stated.cells == 2
    assert "5 from the cache" in capsys.readouterr().out


def test_a_judge_that_never_answers_stops_annotate_with_its_reason_and_keeps_the_judgments(project, judged, capsys):
    assert run(project, judged, "--task-id", ENGLISH_SIMPLE, "--task-id", TWO_YEAR) == 0
    assert annotate(project, judged) == 0
    kept = (project / "results" / "r" / "fact_judgments.jsonl").read_bytes()
    shutil.rmtree(project / "results" / ".judge-cache")
    judged.respond = lambda request: fault(401, "Incorrect API key provided")
    asked = len(judged.requests)
    capsys.readouterr()
    assert annotate(project, judged) == 1
    assert len(judged.requests) - asked == 4  # the first episode's four rows, once each: then it stopped
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: the fact judge gave no reply") and "Incorrect API key provided" in line
    assert (project / "results" / "r" / "fact_judgments.jsonl").read_bytes() == kept


def test_report_gives_cells_summed_and_per_question_mean_rows_and_columns_as_computed_by_hand(project, judged, capsys):
    tasks = ["--task-id", ENGLISH_SIMPLE, "--task-id", ENGLISH_COMPLEX, "--task-id", TWO_YEAR]
    assert run(project, judged, *tasks, "--epochs", "2") == 0, capsys.readouterr().out
    assert annotate(project, judged) == 0
    out = project / "report"
    assert main(["report", str(project / "results" / "r"), "--out", str(out)]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    # Per episode (x2 epochs): English tasks see 3/5 cells and rows, 0/1 columns and state 2/5, 2/5, 0/1; the
    # two-year task sees and states 4/4, 4/4, 1/1. Correct: the simple English and the two-year task.
    # seen:   cells (3+3+4)*2 / (5+5+4)*2 = 20/28; columns 2/6; solid (correct and every row) 2/6
    # stated: cells (2+2+4)*2 / 28 = 16/28; rows the same; columns 2/6; solid 2/6
    # The paper's eq. 8 averages each episode's share of its cells instead of summing them:
    # seen:   (3/5 + 3/5 + 4/4)*2 / 6 = 11/15 = 73.3 (not 71.4); stated: (2/5 + 2/5 + 4/4)*2 / 6 = 3/5 = 60.0
    header = "| cell sum (released code) | row | column | solid | cell per-question mean (paper, eq. 8) |"
    assert header in report
    seen = re.search(r"\| mudabench \| seen \| 6 \| (.*) \|", report).group(1).split(" | ")
    stated = re.search(r"\| mudabench \| stated \| 6 \| (.*) \|", report).group(1).split(" | ")
    assert [cell.split(" ")[0] for cell in seen] == ["71.4", "71.4", "33.3", "33.3", "73.3", "–"]
    assert [cell.split(" ")[0] for cell in stated] == ["57.1", "57.1", "33.3", "33.3", "60.0", "0"]  # 0 failed
    assert re.search(r"\| all \| stated \| 6 \| 57\.1 \[", report)


def test_the_viewer_marks_the_cells_each_episode_saw_and_stated(project, judged, capsys):
    assert run(project, judged, "--task-id", ENGLISH_SIMPLE) == 0, capsys.readouterr().out
    with viewer_page([project / "results" / "r"]) as page:
        page.locator("tr.episode").first.click()
        page.wait_for_selector("table.facts tr:nth-child(6)")
        table = page.locator("table.facts")
        rows = [row.inner_text().split("\t") for row in table.locator("tr").all()[1:]]
        assert [(row[1], row[-2], row[-1]) for row in rows] == [
            ("DY", "✓", "✓"),
            ("PLAY", "✓", "✓"),
            ("CMCO", "✓", "✗"),
            ("QMCO", "✗", "✗"),
            ("OPTT", "✗", "✗"),
        ]

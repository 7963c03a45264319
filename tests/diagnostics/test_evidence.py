"""Evidence records: documents touched per episode, evidence recall, failure modes, refused attempts."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core.status import Status
from harness.diagnostics.escapes import refused_attempts
from harness.diagnostics.evidence import DocumentIndex, touched_documents
from harness.diagnostics.failure_modes import failure_mode
from harness.inputs.tasks import load_task_file
from harness.records.events import ActionEvent, ObservationEvent
from harness.records.jsonl import read_jsonl
from tests.conftest import REPO

DOCS = ["a.md", "sub/b.md", "c.md", "with space.md"]


def action(turn, command):
    return ActionEvent(turn=turn, command=command)


def observation(turn, stdout, stderr=""):
    return ObservationEvent(
        turn=turn,
        exit_code=0,
        stdout=stdout,
        stderr=stderr,
        timed_out=False,
        truncated=False,
        raw_bytes=None,
        duration_s=None,
        text=stdout + stderr,
    )


def test_documents_are_named_shown_or_listed_with_their_first_turn():
    events = [
        action(1, "ls /workspace/documents"),
        observation(1, "a.md\nc.md\nwith space.md\n"),
        action(2, "grep -r units /workspace/documents"),
        observation(2, "/workspace/documents/sub/b.md:| 2020 | 40 |\n"),
        action(3, "cat 'with space.md'; head -3 /workspace/documents/a.md"),
        observation(3, "x\n"),
    ]
    record = touched_documents(events, DocumentIndex(DOCS), ["a.md", "sub/b.md", "c.md"])
    by_name = {touch.document: touch.record().model_dump() for touch in record.touches}
    assert by_name == {
        "a.md": {"document": "a.md", "first_turn": 1, "reached_turn": 3, "how": ["listed", "named"]},
        "c.md": {"document": "c.md", "first_turn": 1, "reached_turn": None, "how": ["listed"]},
        "with space.md": {"document": "with space.md", "first_turn": 1, "reached_turn": 3, "how": ["listed", "named"]},
        "sub/b.md": {"document": "sub/b.md", "first_turn": 2, "reached_turn": 2, "how": ["shown"]},
    }
    assert record.evidence_reached == {"a.md": 3, "sub/b.md": 2}
    assert record.recall == pytest.approx(2 / 3)
    assert record.row_fields()["files_touched"] == 3


def test_a_name_inside_a_longer_name_is_not_a_touch():
    events = [action(1, "cat /workspace/documents/a.md.bak data.md")]
    assert touched_documents(events, DocumentIndex(["a.md", "ata.md"]), ["a.md"]).touches == []


def test_head_headers_show_content():
    events = [action(1, "head -n1 *"), observation(1, "==> a.md <==\nx\n\n==> c.md <==\ny\n")]
    record = touched_documents(events, DocumentIndex(DOCS), ["a.md", "c.md"])
    assert record.recall == 1.0 and record.evidence_reached == {"a.md": 1, "c.md": 1}


def test_a_page_image_looked_at_and_a_glob_the_shell_expands_reach_their_documents(
    findocmre_project: Path, tmp_path: Path, capsys
):
    """An agent that looked at its evidence's page image, and one that ran `cat /workspace/documents/*.md`, touched
    their evidence (both read recall 0 and were listed as correct without touching any)."""
    tasks = {task.id: task for task in load_task_file(findocmre_project / "tasks" / "findocmre.jsonl")}
    pictures = tasks["huaxia-2023-exact"].evidence[0].rsplit(".", 1)[0] + ".images"
    script = tmp_path / "script.yaml"
    script.write_text(
        json.dumps(
            {
                "tasks": {
                    "huaxia-2023-exact": [
                        {"view_image": f"/workspace/documents/{pictures}/page-002.png"},
                        "<answer>15</answer>",
                    ],
                    "acme-2024-exact": [{"bash": "cat /workspace/documents/*.md >/dev/null"}, "<answer>65</answer>"],
                }
            }
        )
    )
    folders = ["--tasks-dir", str(findocmre_project / "tasks"), "--collections-dir"]
    folders += [str(findocmre_project / "collections"), "--results-dir", str(tmp_path), "--run-id", "looked"]
    chosen = ["--task-id", "huaxia-2023-exact", "--task-id", "acme-2024-exact"]
    arguments = ["--domain", "findocmre", *folders, *chosen, "--model", f"scripted:{script}"]
    assert main([*arguments, "--vision", "--sandbox", "local"]) == 0
    rows = {row["task_id"]: row for row in read_jsonl(tmp_path / "looked" / "results.jsonl")}
    assert {task: (row["verdict"], row["evidence_recall"]) for task, row in rows.items()} == {
        "huaxia-2023-exact": ("correct", 1.0),
        "acme-2024-exact": ("correct", 1.0),
    }
    assert main(["report", str(tmp_path / "looked"), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Correct without touching any evidence file (possible guess or leak)\n\nNone." in report
    capsys.readouterr()


def test_a_quoted_glob_a_listed_glob_and_a_picture_named_by_its_file_name_alone_reach_nothing():
    index = DocumentIndex(["a.md", "a.images/page-001.png", "b.md", "b.images/page-001.png"])
    listing = "find /workspace/documents -name '*.md'; file page-001.png; f=$(ls /workspace/documents/*.md)"
    events = [action(1, listing)]
    record = touched_documents(events, index, ["a.md", "b.md"])
    assert record.evidence_reached == {}
    looked = [action(1, "python crop.py /workspace/documents/b.images/page-001.png")]
    assert touched_documents(looked, index, ["a.md", "b.md"]).evidence_reached == {"b.md": 1}


def test_a_task_without_evidence_has_no_recall():
    assert touched_documents([action(1, "cat a.md")], DocumentIndex(DOCS), []).recall is None


@pytest.mark.parametrize(
    ("status", "correct", "recall", "mode"),
    [
        (Status.ANSWERED, True, 0.0, None),
        (Status.SANDBOX_ERROR, False, 0.0, None),
        (Status.TURN_LIMIT, False, 1.0, "resource_exhaustion"),
        (Status.CONTEXT_LIMIT, False, None, "resource_exhaustion"),
        (Status.ANSWERED, False, 0.5, "incomplete_inspection"),
        (Status.FORMAT_ERRORS, False, 0.0, "incomplete_inspection"),
        (Status.ANSWERED, False, 1.0, "evidence_misidentification"),
        (Status.ANSWERED, False, None, "unclassified"),
        (Status.FORMAT_ERRORS, False, 1.0, "unclassified"),
    ],
)
def test_failure_mode_rule(status, correct, recall, mode):
    assert failure_mode(status, correct, recall) == mode


def test_refused_attempts_are_counted_once_per_command():
    events = [
        observation(1, "", "curl: (6) Could not resolve host: example.com\nCould not resolve host: x"),
        observation(2, "", "touch: cannot touch 'x': Read-only file system\n"),
        observation(3, "fine\n"),
    ]
    assert refused_attempts(events) == {"refused_network": 1, "refused_writes": 1}


def demo_project(mini, task_ids):
    """The demo domain's tasks and collection, copied (the run reads them, the repository stays untouched)."""
    tasks = [json.loads(line) for line in (REPO / "tasks" / "demo.jsonl").read_text().splitlines() if line.strip()]
    chosen = [task for task in tasks if task["id"] in task_ids]
    (mini.tasks_dir / "demo.jsonl").write_text("".join(json.dumps(task) + "\n" for task in chosen))
    shutil.copytree(REPO / "collections" / "demo", mini.root / "collections" / "demo")
    return {task["id"]: task for task in chosen}


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_recall_on_the_demo_domain_with_the_oracle_and_a_partial_reader(mini, sandbox, request):
    if sandbox == "docker":
        request.getfixturevalue("docker_image")
    tasks = demo_project(mini, ["demo-001"])
    first, second = tasks["demo-001"]["evidence"]
    oracle = mini.run("--model", "oracle", "--domain", "demo", "--sandbox", sandbox, run_id="oracle")
    assert oracle.exit_code == 0, oracle.output
    [row] = oracle.rows
    assert (row["verdict"], row["evidence_recall"], row["failure_mode"]) == ("correct", 1.0, None)
    assert set(row["evidence_reached"]) == {first, second}
    assert row["evidence_method"] == "commands-and-output (approximation)"
    replies = [
        {"bash": "ls /workspace/documents | head -50"},
        {"bash": f"grep -n 1965 /workspace/documents/{first} | head -3"},
        "<answer>1</answer>",
    ]
    partial = mini.run("--model", mini.script(replies), "--domain", "demo", "--sandbox", sandbox, run_id="partial")
    [row] = partial.rows
    assert (row["evidence_recall"], row["evidence_reached"]) == (0.5, {first: 2})
    assert (row["verdict"], row["failure_mode"]) == ("wrong_value", "incomplete_inspection")
    assert row["files_touched"] == 1
    [event] = [e for e in partial.trajectory("demo-001", "demo") if e["event"] == "evidence"]
    listed = {touch["document"] for touch in event["touches"] if touch["how"] == ["listed"]}
    assert second in listed and first not in listed


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_refused_network_and_collection_writes_are_counted_per_episode(mini, sandbox, request):
    if sandbox == "docker":
        request.getfixturevalue("docker_image")
    replies = [
        {"bash": "echo x > /workspace/documents/ledger.md"},
        {"bash": "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), 3)\""},
        "<answer>42</answer>",
    ]
    outcome = mini.run("--model", mini.script(replies), "--sandbox", sandbox)
    [row] = outcome.rows
    assert (row["refused_writes"], row["refused_network"]) == (1, 1), outcome.trajectory("t1")


def evidence_project(mini):
    """t1 (evidence ledger.md, gold 42) and a canary c1 whose gold 42 the sandbox cannot know."""
    tasks = [
        {"id": "t1", "domain": "mini", "question": "Units?", "answer": "42", "evidence": ["ledger.md"]},
        {"id": "c1", "domain": "mini", "question": "Canary?", "answer": "42", "canary": True},
    ]
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))


def test_report_has_evidence_failure_mode_and_containment_sections(mini):
    from harness.cli.main import main

    evidence_project(mini)
    read = {"bash": "cat /workspace/documents/ledger.md"}
    reader = mini.run("--model", mini.script([read, "<answer>42</answer>"]), run_id="reader")
    guesser = mini.run("--model", mini.script(["<answer>42</answer>"]), run_id="guesser")
    writer = {"bash": "cat /workspace/documents/ledger.md; touch /workspace/documents/x"}
    wrong = mini.run("--model", mini.script([writer, "<answer>41</answer>"]), run_id="wrong")
    out = mini.root / "report"
    assert main(["report", str(reader.run_dir), str(guesser.run_dir), str(wrong.run_dir), "--out", str(out)]) == 0
    mini.capsys.readouterr()
    markdown = (out / "report.md").read_text()
    recall = markdown.split("## Evidence recall")[1].split("##")[0]
    assert recall.count("| mini | 1 | 100.0 | 1 |") == 2 and recall.count("| mini | 1 | 0.0 | 0 |") == 1
    guesses = markdown.split("## Correct without touching any evidence file")[1].split("##")[0]
    assert guesses.count("| mini | t1 |") == 1 and "c1" not in guesses
    containment = markdown.split("## Containment")[1]
    assert "| mini | t1 | 0 | 1 |" in containment and "| mini | c1 | 0 | 1 |" in containment
    assert "2 answered correctly" in containment and containment.count("CONTAINMENT FAILURE") == 2
    assert "Rule: turn/time/context limit" in markdown
    assert (out / "failure_modes.png").read_bytes()[:4] == b"\x89PNG"
    with (out / "failure_modes.csv").open() as handle:
        counts = {
            (row["model"].endswith("script-2.yaml"), row["failure_mode"]): row["episodes"]
            for row in csv.DictReader(handle)
        }
    assert counts[(True, "evidence_misidentification")] == counts[(True, "unclassified")] == "1"
    assert counts[(False, "incomplete_inspection")] == "0"


def test_an_episode_whose_sandbox_never_started_has_no_evidence_record(mini, monkeypatch):
    from harness.sandboxes.base import SandboxError
    from tests.records.test_records import broken_backend

    evidence_project(mini)
    broken_backend(monkeypatch, start=SandboxError("no room for a sandbox"))
    outcome = mini.run("--model", mini.script(["<answer>42</answer>"]), "--task-id", "t1")
    [row] = outcome.rows
    assert (row["status"], row["evidence_recall"], row["failure_mode"]) == ("sandbox_error", None, None)
    assert [e["event"] for e in outcome.trajectory("t1")] == ["episode_start", "episode_end"]


def test_viewer_shows_header_failure_mode_search_and_touched_files_in_headless_chromium(mini):
    from tests.helpers.browser import search, viewer_page

    evidence_project(mini)
    (mini.root / "collections" / "mini" / "<i>odd&amp;.md").write_text("odd\n")
    replies = [{"bash": "ls /workspace/documents; echo needle-42"}, "<answer>41</answer>"]
    outcome = mini.run("--model", mini.script(replies))
    with viewer_page([outcome.run_dir]) as page:
        page.locator("#runs summary").click()  # the run header is folded until opened
        header = page.locator("#header").inner_text()
        assert "model scripted" in header and "default 0" in header and "max_turns=200" in header
        search(page, "NEEDLE-42", 2)
        assert page.locator("tr.episode").count() == 2
        search(page, "no-such-output", 0)
        assert page.locator("tr.episode").count() == 0
        search(page, "")
        page.wait_for_selector("tr.episode")
        page.select_option("#filter-failure_mode", "incomplete_inspection")
        assert page.locator("tr.episode").count() == 1
        page.locator('tr.episode[data-key="mini/t1"]').click()
        graded = page.locator("#main p.graded").inner_text()
        assert graded == "graded answer 41 → wrong_value · failure mode incomplete_inspection"
        missed = page.locator("li.evidence.missed")
        assert missed.count() == 1 and missed.inner_text() == "ledger.md · listed · turn 1 · evidence"
        listed = page.locator("#main details summary", has_text="documents only listed")
        assert listed.inner_text() == "2 more documents only listed"
        assert page.locator("ul.listed-only li", has_text="<i>odd&amp;.md · listed").count() == 1
        assert "evidence recall 0%" in page.locator(".touched-files").inner_text()


def test_regrading_recomputes_the_failure_mode(mini):
    from harness.cli.main import main
    from harness.records.trajectory import read_jsonl

    evidence_project(mini)
    outcome = mini.run(
        "--model",
        mini.script([{"bash": "cat /workspace/documents/ledger.md"}, "<answer>41</answer>"]),
        "--task-id",
        "t1",
    )
    assert outcome.rows[0]["failure_mode"] == "evidence_misidentification"
    path = outcome.run_dir / "episodes" / "mini" / "t1.jsonl"
    events = read_jsonl(path)
    events[0]["task"]["answer"] = "41"  # a corrected gold: the episode is now correct
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    assert main(["replay", "--regrade", str(outcome.run_dir)]) == 0
    [row] = read_jsonl(outcome.run_dir / "results.regraded.jsonl")
    assert (row["verdict"], row["failure_mode"]) == ("correct", None)


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_watched_opens_reach_a_file_no_command_names(mini, sandbox, request):
    if sandbox == "docker":
        request.getfixturevalue("docker_image")
    first, second = demo_project(mini, ["demo-001"])["demo-001"]["evidence"]
    replies = [
        {"bash": "ls /workspace/documents"},  # lists both: opens neither
        {"bash": f"head -1 /workspace/documents/{first}"},
        {"bash": 'f=$(ls /workspace/documents/*1970-1979*); wc -c < "$f"'},  # opens the second, never names it
        "<answer>1</answer>",
    ]
    script = mini.script(replies)
    runs = {}
    for mode, extra in (("approximate", ()), ("exact", ("--watch-opens",))):
        outcome = mini.run("--model", script, "--domain", "demo", "--sandbox", sandbox, *extra, run_id=mode)
        [runs[mode]] = outcome.rows
    approximate, exact = runs["approximate"], runs["exact"]
    assert (approximate["evidence_recall"], approximate["evidence_reached"]) == (0.5, {first: 2})
    assert approximate["failure_mode"] == "incomplete_inspection"
    assert exact["evidence_method"] == "inotify on the collection folder (exact opens)"
    assert (exact["evidence_recall"], exact["evidence_reached"]) == (1.0, {first: 2, second: 3})
    assert (exact["files_touched"], exact["failure_mode"]) == (2, "evidence_misidentification")


def test_watching_opens_needs_one_sandbox_at_a_time(mini):
    demo_project(mini, ["demo-001"])
    outcome = mini.run("--model", "oracle", "--domain", "demo", "--watch-opens", "--workers", "2")
    assert outcome.rows[0]["evidence_method"] == "commands-and-output (approximation)"

"""Names, ids and outputs that look like rich markup are printed as written, never interpreted."""

from __future__ import annotations

import json

from harness.cli.main import main

MARKUP = "[/x][bold]b[link=https://example.com]l"
DOMAIN = "plain-d"  # a domain is a plain name (names.py); ids, models and outputs carry the markup


def markup_project(mini) -> str:
    """A domain, a task id and a script folder whose names are rich markup; returns the model spec."""
    task = {"id": "t" + MARKUP, "domain": DOMAIN, "question": "Q?", "answer": "42"}
    (mini.tasks_dir / f"{DOMAIN}.jsonl").write_text(json.dumps(task) + "\n")
    (mini.root / "collections" / DOMAIN).mkdir()
    (mini.root / "collections" / DOMAIN / "a.md").write_text(MARKUP + "\n")
    folder = mini.root / "[/x]"  # the folder `x]` in the folder `[`
    folder.mkdir(parents=True)
    script = folder / "script.yaml"
    script.write_text(json.dumps([{"bash": "cat documents/a.md"}, "<answer>about 42</answer>"]))
    return f"scripted:{script}"


def test_progress_and_summary_show_markup_like_names_as_written(mini, monkeypatch):
    # the script by a path relative to the project: the markup-like folder stays inside the line's first 60
    # columns however deep the temporary folder is (pytest-xdist's are deeper)
    monkeypatch.chdir(mini.root)
    model = markup_project(mini).replace(f"{mini.root}/", "")
    outcome = mini.run("--model", model, "--domain", DOMAIN)
    assert outcome.exit_code == 0, outcome.output
    assert f"{model} on {DOMAIN}"[:60] in outcome.output  # the progress description (cut to the line width)
    assert f"│ {DOMAIN} " in outcome.output  # the summary table's domain cell
    assert outcome.rows[0]["task_id"] == "t" + MARKUP


def test_replay_and_regrade_print_markup_like_ids_and_outputs_as_written(mini, monkeypatch):
    outcome = mini.run("--model", markup_project(mini), "--domain", DOMAIN)
    (mini.root / "collections" / DOMAIN / "a.md").write_text("[/y]\n")
    assert main(["replay", str(outcome.run_dir)]) == 1
    output = mini.capsys.readouterr().out
    assert f"differs {DOMAIN}/t{MARKUP}: observation 1: stdout was '{MARKUP}\\n', now '[/y]\\n'" in output

    from harness.grading import numeric

    monkeypatch.setattr(numeric, "TOLERATED_FLAGS", dict(numeric.TOLERATED_FLAGS, default=frozenset()))
    assert main(["replay", str(outcome.run_dir), "--regrade"]) == 0
    assert f"changed {DOMAIN}/t{MARKUP}: correct -> format_violation" in mini.capsys.readouterr().out


def test_input_error_quoting_markup_is_printed_as_written(mini):
    outcome = mini.run("--model", "oracle", "--task-id", MARKUP)
    assert outcome.exit_code == 2
    assert f"error: --task-id: unknown task id {MARKUP!r}" in outcome.output


def test_report_and_viewer_paths_holding_markup_are_printed_as_written(mini):
    outcome = mini.run("--model", "oracle")
    report_dir, site = mini.root / "[/x]report", mini.root / "[/x]view"
    (mini.root / "[").mkdir()
    assert main(["report", str(outcome.run_dir), "--out", str(report_dir)]) == 0
    assert main(["view", str(outcome.run_dir), "--static", str(site)]) == 0
    output = mini.capsys.readouterr().out.replace("\n", "")  # a long temporary folder wraps at 80 columns
    assert f"report written to {report_dir}" in output
    assert f"viewer written to {site / 'index.html'}" in output

"""The end of an episode is made in one place (diagnostics/episode_end.py) for a live run and an imported
trajectory: what the finish adds to a row appears in both."""

from __future__ import annotations

import dataclasses

from harness.cli.main import main
from harness.diagnostics import episode_end
from harness.records.trajectory import read_jsonl, read_trajectory


def test_a_field_the_finish_adds_reaches_a_live_run_and_an_import(mini, monkeypatch):
    annotated = episode_end._annotated
    phase = {"now": "run"}

    def noting(task, end, row, log):
        return dataclasses.replace(annotated(task, end, row, log), detail=f"finished once ({phase['now']})")

    monkeypatch.setattr(episode_end, "_annotated", noting)
    ours = mini.run("--model", mini.script(["<answer>42</answer>"]))
    assert ours.exit_code == 0, ours.output
    out = mini.root / "exported"
    assert main(["export", "mini-swe-agent", str(ours.run_dir), str(out)]) == 0
    phase["now"] = "import"  # an import that kept the run's row, or made its own end, would not say so
    assert main(["import", "mini-swe-agent", str(out), *mini.folder_arguments("back")]) == 0
    for run, expected in ((ours.run_dir, "finished once (run)"), (mini.results_dir / "back", "finished once (import)")):
        rows = read_jsonl(run / "results.jsonl")
        assert [row["detail"] for row in rows] == [expected]
        (trajectory,) = (run / "episodes" / "mini").glob("*.jsonl")
        ends = [event for event in read_trajectory(trajectory) if event["event"] == "episode_end"]
        assert [end["detail"] for end in ends] == [expected]

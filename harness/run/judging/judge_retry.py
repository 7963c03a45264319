"""On resume, episodes whose judges failed are graded again from their logged submission: the agent is not
run again (its answer stands), only the judges are asked (docs/GRADERS.md §4)."""

from __future__ import annotations

import dataclasses

from harness.grading import grade
from harness.grading.judge import JudgePanel
from harness.inputs.tasks import Task
from harness.records.episode_row import grade_fields
from harness.records.events import EpisodeEndEvent
from harness.records.reading import read_events
from harness.records.results import ResultRow, ResultsWriter
from harness.records.run_folder import RunFolder
from harness.records.trajectory import TrajectoryWriter, judge_log


def regrade_judge_errors(
    rows: list[ResultRow], tasks: list[Task], folder: RunFolder, judge: JudgePanel, writer: ResultsWriter
) -> list[ResultRow]:
    """The new rows, appended to results.jsonl; each trajectory gets the judge calls and a new `episode_end`."""
    by_key = {(task.domain, task.id): task for task in tasks}
    regraded = []
    for row in rows:
        path = folder.trajectory_path(row.domain, row.task_id, row.epoch)
        events = read_events(path)
        end = events[-1].event if events else None
        if not isinstance(end, EpisodeEndEvent):  # a row without its log: nothing to grade from, the row stands
            continue
        submission = end.submission
        log = TrajectoryWriter(path, append=True)
        try:
            task = by_key[row.key]
            graded = grade(task.grader, submission, task.gold, judge, judge_log(log))
            new = dataclasses.replace(row, **grade_fields(graded))
            log.write(EpisodeEndEvent(row=new, submission=submission, regraded=True))
        finally:
            log.close()
        writer.append(new)
        regraded.append(new)
    return regraded

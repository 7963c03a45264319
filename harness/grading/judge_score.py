"""The `score` grader: FinDocMRE-style open-ended answers, each judge of the panel giving an integer score in
the protocol's range (0-5 by default); the grade is the mean of the valid scores, `judge_error` with fewer
valid scores than the quorum. The verdict (for the accuracy tables) is correct only at the range's top; the
report shows scored types by their mean score (docs/GRADERS.md §4.3)."""

from __future__ import annotations

from harness.grading.gold import GoldSpec
from harness.grading.judge import JudgeLog, JudgeNotConfigured, JudgePanel
from harness.grading.record import Grade, Verdict

GRADER_VERSION = "score-1.0"


class ScoreGrader:
    """In the registry for its name, version and gold check; grading goes through a `JudgePanel`."""

    name = "score"
    version = GRADER_VERSION

    def validate(self, gold: GoldSpec) -> None:
        """Any non-empty reference answer can be scored (tasks.py already requires one)."""

    def grade(self, submission: str | None, gold: GoldSpec) -> Grade:
        raise JudgeNotConfigured("the score grader needs a judge panel (--judge)")


def score_grade(panel: JudgePanel, submission: str | None, gold: GoldSpec, log: JudgeLog | None = None) -> Grade:
    protocol = panel.score_protocol
    assert protocol.score_range is not None
    answer, ungraded = panel.judged_text(submission, protocol)
    if answer is None:
        assert ungraded is not None
        return _versioned(ungraded)
    scores: list[int | None] = []
    failures: list[str] = []
    costs: list[float] = []
    for model in panel.models:
        event = panel.ask(model, gold, answer, protocol)
        if log is not None:
            log(event)
        value = event["verdict"]
        scores.append(value if isinstance(value, int) else None)
        if event["failure"]:
            failures.append(event["failure"])
        if event["cost_usd"] is not None and not event["cached"]:
            costs.append(event["cost_usd"])
    cost = round(sum(costs), 8) if costs else None
    valid = [score for score in scores if score is not None]
    content = answer if protocol.reads == "answer" else None
    if len(valid) < panel.quorum:
        verdict, mean = Verdict.JUDGE_ERROR, None
        reasons = [*sorted(set(failures)), "NO_QUORUM"]
    else:
        mean = sum(valid) / len(valid)
        verdict = Verdict.CORRECT if mean == protocol.score_range[1] else Verdict.WRONG_VALUE
        reasons = (["JUDGES_DISAGREE"] if len(set(valid)) > 1 else []) + sorted(set(failures))
    tally = f"scores {'/'.join('-' if s is None else str(s) for s in scores)}"
    return Grade(
        verdict,
        verdict,
        verdict,
        reasons,
        content,
        tally,
        None,
        GRADER_VERSION,
        judge_cost_usd=cost,
        score=mean,
        judge_scores=scores,
        score_range=list(protocol.score_range),
    )


def _versioned(grade: Grade) -> Grade:
    return Grade(
        grade.verdict,
        grade.verdict_strict,
        grade.verdict_lenient,
        grade.reasons,
        grade.tag_content,
        grade.parsed_value,
        grade.unit,
        GRADER_VERSION,
    )

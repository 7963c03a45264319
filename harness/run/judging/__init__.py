"""Judges over a run: the judge panel from its flags, judge errors graded again on resume, and `annotate`'s
failure modes and stated facts."""

__all__ = ["annotate_facts", "annotate_failures", "judge_retry", "judges"]

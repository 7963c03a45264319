"""What an episode's log says beyond its grade: the documents it touched and evidence recall, the facts it saw
and stated, its failure mode, refused escape attempts, and the condensed log the judges read. Pure functions of
one episode's events, computed at its end and again on import; `annotate` asks the judges."""

__all__ = [
    "condensed",
    "episode_end",
    "escapes",
    "evidence",
    "fact_judge",
    "failure_modes",
    "mode_judge",
    "mode_prompt",
    "workflow_stages",
]

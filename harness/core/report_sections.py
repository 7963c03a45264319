"""The report's optional sections, by the names a benchmark profile lists under `report:` (the accuracy table and
its CSVs are always there): the profile names what its benchmark's report shows; the report shows those."""

from __future__ import annotations

REPORT_SECTIONS: dict[str, str] = {
    "statistics": "uncertainty clustered by task and paired comparisons of the models",
    "plots": "accuracy per domain, failure modes, turns and the other figures",
    "frontier": "the cost–accuracy frontier: each run by cost, tokens and time per task against accuracy",
    "judge_agreement": "agreement of the judges' failure labels (after `annotate`)",
    "evidence": "evidence recall, failure modes and network or write attempts",
    "facts": "intermediate facts: cell, row, column and solid accuracy (MuDABench's metrics)",
    "mudabench_tables": "MuDABench's Tables 2-4 and Figure 4 as printed: by split, stage, document kind and size",
    "closed_book": "answers without the documents, against those with them",
    "types": "the overall score as the mean of each task type's metric (FinDocMRE's per-type table)",
    "groups": "scores per task group (FinDocMRE's domain, language and chart count)",
    "paper_tables": "FinDocMRE's tables as its paper prints them: Table 3, its accuracy / score tables, per judge",
}
"""Name -> what the section shows. A profile without `report:` shows every section its runs have data for."""

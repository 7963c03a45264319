"""MuDABench's Table 2 rows in its paper's order, whatever order the report's runs come in: the RAG baseline (without
metadata, then with; by chunk multiple, 1.5 before 2 and 10), then the workflow (by chunks, noise last), then other
systems."""

from __future__ import annotations

from harness.analysis.mudabench_tables import RunSetting, paper_order

SETTINGS = {
    "noise wf": RunSetting("Workflow", "5 chunks, local, noise (seed 7)", "m", (1, True, False, 5.0)),
    "agent": RunSetting("bash-agent", "–", "m"),
    "wf 5": RunSetting("Workflow", "5 chunks, local", "m", (1, False, False, 5.0)),
    "rag 2 meta": RunSetting("RAG", "2×|D|, metadata, local", "m", (0, False, True, 2.0)),
    "rag 10": RunSetting("RAG", "10×|D|, no metadata, local", "m", (0, False, False, 10.0)),
    "rag 1.5": RunSetting("RAG", "1.5×|D|, no metadata, local", "m", (0, False, False, 1.5)),
    "wf 1": RunSetting("Workflow", "1 chunk, local", "m", (1, False, False, 1.0)),
    "rag 2": RunSetting("RAG", "2×|D|, no metadata, local", "m", (0, False, False, 2.0)),
}


def test_table2_rows_follow_the_paper_s_order_not_the_report_s():
    labels = ["unknown", *SETTINGS]
    assert paper_order(labels, SETTINGS) == [
        *("rag 1.5", "rag 2", "rag 10", "rag 2 meta"),
        *("wf 1", "wf 5", "noise wf"),
        *("unknown", "agent"),
    ]

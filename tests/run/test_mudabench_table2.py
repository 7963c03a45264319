"""MuDABench's Table 2 from runs: the report's table (two RAG runs, settings apart, over imported tasks of both
splits, read by loopback models and judged by loopback judges: each run one row named from its run.yaml, Simple and
Complex side by side, equal to a hand computation), and the sweep of the paper's rows (each row's profile and
model, planned: one run per row with that row's settings)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.inputs.config_sources import build_config
from harness.run.sweep import plan_sweep
from tests.helpers.openai_server import Step, reply
from tests.inputs.test_mudabench_facts_import import write_pdfs
from tests.run.test_rag_baseline import CHINESE, ENGLISH, FIXTURE

SWEEP = Path(__file__).parents[2] / "docs" / "guide" / "mudabench-table2.yaml"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The fixture's MuDABench import under `mudabench`, and again with noise under `mudabench-noise`."""
    root = tmp_path_factory.mktemp("mudabench")
    for split in ("simple", "complex"):
        shutil.copy(FIXTURE / f"{split}.json", root / f"{split}.json")
    write_pdfs(root / "pdfs")
    for domain, noise in (("mudabench", ()), ("mudabench-noise", ("--noise", "0.5", "--noise-seed", "7"))):
        main(
            [
                *("tasks", "import", "mudabench", str(root / "simple.json"), str(root / "complex.json")),
                *("--pdf-dir", str(root / "pdfs"), "--domain", domain, *noise),
                *("--tasks-dir", str(root / "tasks"), "--collections-dir", str(root / "collections")),
            ]
        )  # exit code 1: the fixture's missing PDF skips its own set's tasks
    return root


COMPLEX = "complex-q_3c6e1f0a9b2d4e58"
"""The English set again (five facts), a complex question."""
CORRECT_PER_RUN = {
    "a": {"What are the stock symbols", "营业总成本从2021年到2022年极差", "Report the top three companies"},
    "b": {"营业总成本从2021年到2022年极差"},
}
"""Per run, the questions its answers are judged correct on (the rest incorrect)."""
SIDES_PER_RUN = {("a", "en"): (5, 0), ("a", "zh"): (1, 0), ("b", "en"): (3, 1), ("b", "zh"): (4, 2)}
"""Per run and language of the facts: the coverage judges' correct and error counts."""


def respond_per_run(request: dict) -> Step:
    prompt = request["messages"][-1]["content"]
    model = request["model"]
    if model.startswith("reader-"):
        return reply(f"<answer>PLAY, DY, CMCO ({model[-1]})</answer>")
    run = model[-1]
    correct, errors = SIDES_PER_RUN[(run, "en" if "Company [DY]" in prompt else "zh")]
    if "(The correct side)" in prompt:
        return reply(json.dumps({"correct_extractions": correct, "total_required": 9, "explanation": "-"}))
    if "(The incorrect side)" in prompt:
        return reply(json.dumps({"error_extractions": errors, "explanation": "-"}))
    right = any(question in prompt for question in CORRECT_PER_RUN[run])
    return reply(json.dumps({"verdict": "CORRECT" if right else "INCORRECT", "reason": "-"}))


@pytest.mark.slow  # two runs and a report with its figures: 10 s on a 2-core machine
def test_the_report_s_table2_has_a_row_per_run_and_the_splits_side_by_side(
    project, tmp_path, openai_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    openai_server.respond = respond_per_run
    settings = {"a": ("chunks=1", "metadata=false"), "b": ("chunks=2", "metadata=true")}
    for run, (chunks, metadata) in settings.items():
        code = main(
            [
                *("--model", f"openai/reader-{run}", "--api-base", openai_server.url, "--domain", "mudabench"),
                *("--tasks-dir", str(project / "tasks"), "--collections-dir", str(project / "collections")),
                *("--results-dir", str(tmp_path), "--run-id", run, "--solver", "rag"),
                *("--task-id", ENGLISH, "--task-id", CHINESE, "--task-id", COMPLEX),
                *("--judge", f"openai/judge-{run}", "--judge-api-base", openai_server.url),
                *("--solver-arg", chunks, "--solver-arg", metadata),
            ]
        )
        assert code == 0
    assert main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    header, _rule, *lines = (
        report.split("## MuDABench as its paper reports it: Table 2")[1].split("\n\n")[2].split("\n")
    )
    assert [cell.strip() for cell in header.strip("|").split("|")] == [
        "system",
        *("setting", "run", "Simple Acc_process", "Simple Acc_final", "Simple Acc_full"),
        *("Complex Acc_process", "Complex Acc_final", "Complex Acc_full"),
    ]
    rows = [[cell.strip().replace("&#124;", "|") for cell in line.strip("|").split("|")] for line in lines]
    a_args, b_args = "(solver=rag, chunks=1, metadata=false)", "(solver=rag, chunks=2, metadata=true)"
    # by hand. Run a: simple = English (5 of 5 facts covered: min(5, 5 - 0)) and Chinese (min(1, 4 - 0) = 1 of 4),
    # both correct: Acc_process (5 + 1) / 9 = 66.7, Acc_final 100, Acc_full 1 of 2 (Chinese not every fact) = 50;
    # complex = English, correct, 5 of 5: 100, 100, 100.
    # Run b: English min(3, 5 - 1) = 3 of 5, Chinese min(4, 4 - 2) = 2 of 4; only the Chinese answer correct:
    # simple (3 + 2) / 9 = 55.6, 50, 0; complex 3 / 5 = 60, 0, 0.
    assert rows == [
        [
            "RAG",
            "1×|D|, no metadata, local",
            f"openai/reader-a {a_args}",
            "66.7",
            "100.0",
            "50.0",
            "100.0",
            "100.0",
            "100.0",
        ],
        ["RAG", "2×|D|, metadata, local", f"openai/reader-b {b_args}", "55.6", "50.0", "0.0", "60.0", "0.0", "0.0"],
    ]
    latex = (tmp_path / "report" / "mudabench_table2.tex").read_text(encoding="utf-8")
    assert r"\multicolumn{3}{c}{Simple} & \multicolumn{3}{c}{Complex}" in latex
    assert (
        rf"RAG & 2×|D|, metadata, local & openai/reader-b {b_args} & 55.6 & 50.0 & 0.0 & 60.0 & 0.0 & 0.0 \\" in latex
    )


ROWS = [
    *(
        ("gpt-4o-2024-11-20", "rag", {"chunks_per_document": c, "metadata": False}, "mudabench")
        for c in (1, 1.5, 2, 2.5)
    ),
    *(
        ("gpt-4o-2024-11-20", "rag", {"chunks_per_document": c, "metadata": True}, "mudabench")
        for c in (1, 1.5, 2, 2.5)
    ),
    ("gpt-4o-2024-11-20", "workflow", {"chunks_per_question": 1}, "mudabench"),
    ("gpt-4.1-mini-2025-04-14", "workflow", {"chunks_per_question": 3}, "mudabench"),
    ("gpt-4.1-mini-2025-04-14", "workflow", {"chunks_per_question": 5}, "mudabench"),
    ("gpt-4.1-mini-2025-04-14", "workflow", {"chunks_per_question": 5}, "mudabench-noise"),
]
"""The paper's Table 2, a row each: its model, system, setting and import (Section 5.1)."""


def test_the_table2_sweep_plans_one_run_per_row_with_its_settings(project, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MOONSHOT_API_KEY", "sk-test")
    config = build_config(
        {},
        {
            "sweep": str(SWEEP),
            "domain": "mudabench",
            "tasks_dir": str(project / "tasks"),
            "collections_dir": str(project / "collections"),
            "results_dir": str(tmp_path),
            "run_id": "table2",
        },
    )
    folder, plans = plan_sweep(config)
    try:
        planned = [
            (
                plan.config.model,
                plan.config.solver,
                {key: plan.protocol[plan.config.solver][key] for key in wanted},
                plan.config.domain,
            )
            for plan, (_model, _solver, wanted, _domain) in zip(plans, ROWS, strict=True)
        ]
        assert planned == ROWS
        for plan in plans:
            assert plan.config.temperature == 0 and plan.config.judge == "kimi-k2"
            assert plan.protocol["judge"]["judge_prompt"] and plan.config.profile.startswith("mudabench-")
            assert all(task.domain == plan.config.domain for task in plan.episodes)
        noisy = [plan for plan in plans if plan.config.domain == "mudabench-noise"]
        assert [plan.config.label for plan in noisy] == ["Noise WF w/ GPT 4.1 mini + Chunk = 5"]
        assert all("-noise" in name for name in noisy[0].collections)
        assert len({plan.run_id for plan in plans}) == len(ROWS)
    finally:
        for plan in plans:
            plan.lock.release()
    assert folder == tmp_path / "table2"


def test_a_sweep_entry_s_unknown_profile_is_named_by_its_line(tmp_path, capsys):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        "- {model: oracle, profile: mudabench-rag-1x, label: a}\n- {model: oracle, profile: nope, label: b}\n"
    )
    code = main(["--sweep", str(sweep), "--domain", "mudabench", "--results-dir", str(tmp_path / "r")])
    [line] = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and f"{sweep}:2: field 'profile': nope: no such profile" in line and not (tmp_path / "r").exists()

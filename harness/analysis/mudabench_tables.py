"""MuDABench's Tables 2 and 4 from runs, in its paper's layout (docs/guide/mudabench.md §4): Table 2 one row per run
(its system and setting named from run.yaml: solver, chunk multiple, metadata, noise), and for each split, read from
the task records (the import's `type`: `simple`, `complex`), Acc_process, Acc_final and Acc_full side by side;
Table 4 per workflow run, each stage's accuracy (the rows' `workflow_stages`) alone and given every earlier stage
correct, per split and over all.

Acc_process is the released code's (Σ covered cells / Σ gold cells of the split's episodes) over the RAG baseline's
retrieved facts, else the judged (stated) ones; an episode with neither is left out of it and of Acc_full (`–` when
none has). Acc_final is the share of correct episodes, Acc_full of those correct with every fact covered (eq. 9).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.fact_accuracy import StatedFacts, process_counts
from harness.analysis.paper_table import latex_cell, paper_latex_table
from harness.analysis.runs import ModelRow, run_key
from harness.core.episode_key import EpisodeKey
from harness.core.safe_text import markdown_grid
from harness.diagnostics.workflow_stages import STAGES
from harness.records.fact_counts import FactCounts
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.records.run_record import RunRecord

SPLITS = ("simple", "complex")
"""MuDABench's splits as its import names the task types, in the paper's column order."""
_MEASURES = ("Acc_process", "Acc_final", "Acc_full")
_NOISE = re.compile(r"-noise\d+s(\d+)$")
"""A noisy import's collection name ends in `-noise<documents>s<seed>` (importers/mudabench.py)."""


@dataclass(frozen=True)
class RunSetting:
    """A Table 2 row's name: the system, its setting and the model, from the run's run.yaml."""

    system: str
    setting: str
    model: str
    rank: tuple[float, ...] = (2,)
    """Where the paper's Table 2 puts the row: RAG, then the workflow, then other systems; noise after the rest,
    without metadata before with, fewer chunks first."""


def paper_order(labels: Sequence[str], settings: Mapping[str, RunSetting]) -> list[str]:
    """LABELS in the paper's row order (ties, and labels without a setting, as given)."""
    return sorted(labels, key=lambda label: settings[label].rank if label in settings else (2,))


def run_setting(record: RunRecord) -> RunSetting:
    """The system (`RAG`, `Workflow`, else the solver's name), its setting (the RAG's chunk multiple and metadata,
    the workflow's chunks a document question, and noise when a collection of the run is a noisy import's)."""
    written = record.protocol.model_dump()
    rag, workflow = written.get("rag"), written.get("workflow")
    parts: list[str] = []
    rank: tuple[float, ...] = (2,)
    if isinstance(rag, dict):
        system = "RAG"
        parts = [f"{rag.get('chunks_per_document', 0):g}×|D|", "metadata" if rag.get("metadata") else "no metadata"]
        rank = (0, bool(rag.get("metadata")), float(rag.get("chunks_per_document") or 0))
    elif isinstance(workflow, dict):
        system = "Workflow"
        chunks = workflow.get("chunks_per_question")
        parts = [f"{chunks} chunk{'s' * (chunks != 1)}"]
        rank = (1, False, float(chunks or 0))
    else:
        system = record.config.solver or "bash-agent"
    section = rag if isinstance(rag, dict) else workflow if isinstance(workflow, dict) else {}
    retriever = section.get("retriever")
    if isinstance(retriever, dict) and retriever.get("backend"):
        parts.append(str(retriever["backend"]))
    seeds = sorted({match[1] for name in record.collections if (match := _NOISE.search(name))})
    parts += [f"noise (seed {', '.join(seeds)})"] if seeds else []
    rank = (rank[0], bool(seeds), *rank[1:])
    return RunSetting(system, ", ".join(parts) or "–", record.protocol.model or record.config.model or "–", rank)


def run_settings(paths: Sequence[Path], names: Mapping[Path, str] | None = None) -> dict[str, RunSetting]:
    """Run label -> its setting (the first folder of a label: a label's runs share one protocol)."""
    found: dict[str, RunSetting] = {}
    for path in paths:
        record = RunFolder(path).read_record()
        found.setdefault((names or {}).get(path) or run_key(record), run_setting(record))
    return found


def _split_cells(rows: Sequence[ResultRow], stated: Mapping[EpisodeKey, FactCounts], digits: int = 1) -> list[str]:
    """Acc_process, Acc_final, Acc_full (%) over ROWS."""
    if not rows:
        return ["–"] * len(_MEASURES)
    judged: list[tuple[FactCounts, bool]] = [
        (counts, row.is_correct()) for row in rows if (counts := process_counts(row, stated)) is not None
    ]
    final = f"{100 * sum(row.is_correct() for row in rows) / len(rows):.{digits}f}"
    total = sum(counts.cells_total for counts, _ in judged)
    process = f"{100 * sum(counts.cells for counts, _ in judged) / total:.{digits}f}" if total else "–"
    full = f"{100 * sum(correct and counts.complete for counts, correct in judged) / len(judged):.{digits}f}"
    return [process, final, full if judged else "–"]


def table2(
    rows: list[ModelRow], models: list[str], settings: Mapping[str, RunSetting], stated: StatedFacts
) -> tuple[list[str], list[list[str]]] | None:
    """The splits found and one line per run label (system, setting, the run's label, then each split's three
    measures), in the paper's row order; None when no row is of a MuDABench split."""
    mine = [entry for entry in rows if entry.row.task_type in SPLITS]
    splits = [split for split in SPLITS if any(entry.row.task_type == split for entry in mine)]
    if not splits:
        return None
    body = []
    for label in paper_order(models, settings):
        of_label = [entry.row for entry in mine if entry.model == label]
        if not of_label:
            continue
        setting = settings.get(label, RunSetting("–", "–", label))
        line = [setting.system, setting.setting, label]
        for split in splits:
            line += _split_cells([row for row in of_label if row.task_type == split], stated.counts.get(label, {}))
        body.append(line)
    return splits, body


def table4(rows: list[ModelRow], models: list[str]) -> tuple[list[str], list[list[str]]] | None:
    """The splits found and per workflow run two lines a stage: its accuracy alone (`independent`) and over the
    episodes whose earlier stages were all correct (`given earlier`), per split and over all (%); None when no
    row has stages."""
    staged = [entry for entry in rows if entry.row.workflow_stages is not None]
    if not staged:
        return None
    splits = [split for split in SPLITS if any(entry.row.task_type == split for entry in staged)]
    body = []
    for label in models:
        of_label = [entry.row for entry in staged if entry.model == label]
        if not of_label:
            continue
        groups = [[row for row in of_label if row.task_type == split] for split in splits] + [of_label]
        for measure in ("independent", "given earlier"):
            for place, stage in enumerate(STAGES):
                earlier = STAGES[:place] if measure == "given earlier" else ()
                body.append([label, measure, stage, *(_stage_share(group, earlier, stage) for group in groups)])
    return splits, body


def _stage_share(rows: Sequence[ResultRow], earlier: Sequence[str], stage: str) -> str:
    """The share (%) of ROWS with every EARLIER stage correct that got STAGE right; `–` when none had."""
    kept = [row.workflow_stages for row in rows if row.workflow_stages and all(row.workflow_stages[s] for s in earlier)]
    return f"{100 * sum(stages[stage] for stages in kept) / len(kept):.1f}" if kept else "–"


def _latex(splits: list[str], body: list[list[str]]) -> str:
    """Table 2's tabular: a header of the splits over their three measures, as the paper sets it."""
    width = 3 + len(_MEASURES) * len(splits)
    lines = [r"\begin{tabular}{lll" + "r" * (width - 3) + "}", r"\toprule"]
    lines.append(
        " & ".join(["", "", "", *(rf"\multicolumn{{3}}{{c}}{{{split.capitalize()}}}" for split in splits)]) + r" \\"
    )
    measures = [m.replace("_", r"\_") for m in _MEASURES] * len(splits)
    lines += [" & ".join(["System", "Setting", "Run", *measures]) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_cell(cell) for cell in line) + r" \\" for line in body]
    return "\n".join([*lines, r"\bottomrule", r"\end{tabular}", ""])


def mudabench_sections(
    rows: list[ModelRow], models: list[str], settings: Mapping[str, RunSetting], stated: StatedFacts, out: Path
) -> str:
    """Tables 2 and 4 in report.md and as `mudabench_table2.tex`, `mudabench_table4.tex` in OUT; '' when no row
    is of a MuDABench split."""
    found = table2(rows, models, settings, stated)
    if found is None:
        return ""
    return _table2_section(*found, out) + _table4_section(rows, models, out)


def _table4_section(rows: list[ModelRow], models: list[str], out: Path) -> str:
    found = table4(rows, models)
    if found is None:
        return ""
    splits, body = found
    header = ["run", "measure", "stage", *(split.capitalize() for split in splits), "all"]
    (out / "mudabench_table4.tex").write_text(paper_latex_table(header, body), encoding="utf-8")
    lines = [
        "### The workflow's stages (Table 4, %)",
        "",
        "Per workflow run, each stage's accuracy alone and over the episodes whose earlier stages were all correct, "
        "scored from the trajectory: planning, every fact's document asked; extraction, every fact value in its "
        "document's answers; normalization, every value answered kept in the normalized lists; code, the program "
        "exited 0. Also `mudabench_table4.tex`.",
        "",
        *markdown_grid(header, body),
        "",
    ]
    return "\n".join(lines) + "\n"


def _table2_section(splits: list[str], body: list[list[str]], out: Path) -> str:
    header = ["system", "setting", "run", *(f"{split.capitalize()} {m}" for split in splits for m in _MEASURES)]
    (out / "mudabench_table2.tex").write_text(_latex(splits, body), encoding="utf-8")
    lines = [
        "## MuDABench as its paper reports it: Table 2 (%)",
        "",
        "One row per run (its system and setting from run.yaml), the split from the task records. Acc_process: "
        "covered facts over gold facts summed over the split's episodes (the released code's sum; the intermediate "
        "facts table gives the paper's per-question mean too), the RAG baseline's retrieved facts, else the judged "
        "(stated) ones; Acc_final: correct answers; Acc_full: correct with every fact covered (eq. 9). `–`: no "
        "episode with the signal. Also `mudabench_table2.tex`.",
        "",
        *markdown_grid(header, body),
        "",
    ]
    return "\n".join(lines) + "\n"

"""MuDABench's Table 3 and Figure 4 from runs: process accuracy by document category and chunk budget, and against
the tokens of a question's document set.

Both read, per episode whose fact rows were judged at its end (the trajectory's `evidence` event: each fact row's
supported columns), its task's fact rows (`episode_start`), each row's document's kind (the collection index's
`doctype`) and each document's tokens (counted as the retrieval counts them, `inputs/collections/tokens.py`), from
the collection folders run.yaml names. Table 3: per kind, its mean tokens a document and, per run (its chunk
setting) and split, Σ covered cells / Σ cells of the rows of that kind. Figure 4: per episode its share of cells
covered against its set's tokens (log scale), with a binomial logit fit on the log tokens and the split as a fixed
effect, as the paper fits it (Section 5.3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harness.analysis.judged_episode import JudgedEpisode
from harness.analysis.mudabench_tables import SPLITS, RunSetting, run_setting
from harness.analysis.paper_table import paper_latex_table
from harness.analysis.runs import run_key
from harness.core.facts import parse_facts
from harness.core.safe_text import markdown_grid
from harness.records.events import EpisodeStartEvent, EvidenceEvent
from harness.records.reading import read_events
from harness.records.run_folder import RunFolder

CollectionReader = Callable[[Path], dict[str, tuple[str, int]]]
"""A collection folder -> its documents by file: (kind, tokens) (cli/report.py reads them, with the inputs' index
page and tokenizer)."""


def judged_episodes(
    paths: Sequence[Path], read: CollectionReader, names: Mapping[Path, str] | None = None
) -> tuple[list[JudgedEpisode], dict[str, list[int]]]:
    """Every episode (latest row) of a MuDABench split whose fact rows were judged at its end, and per document
    kind the tokens of each of its documents met; READ gives a collection's documents."""
    collections: dict[Path, dict[str, tuple[str, int]]] = {}
    episodes: list[JudgedEpisode] = []
    for path in paths:
        folder = RunFolder(path)
        record = folder.read_record()
        label = (names or {}).get(path) or run_key(record)
        setting = _setting_name(run_setting(record))
        for row in folder.latest_rows().values():
            if row.task_type not in SPLITS or row.facts_stated is None:
                continue
            trajectory = folder.trajectory_path(row.domain, row.task_id, row.epoch)
            events = [logged.event for logged in read_events(trajectory)] if trajectory.is_file() else []
            start = next((event for event in events if isinstance(event, EpisodeStartEvent)), None)
            evidence = next((event for event in events if isinstance(event, EvidenceEvent)), None)
            if start is None or evidence is None or evidence.facts_stated is None or not start.task.facts:
                continue
            where = record.collections.get(start.task.collection or "")
            if where is None:
                continue
            place = Path(where.resolved or where.path)
            if not place.is_dir():  # the collection is gone: its documents' kinds and tokens with it
                continue
            if place not in collections:
                collections[place] = read(place)
            by_file = collections[place]
            facts = parse_facts(start.task.facts, str(trajectory))
            judged = [
                (
                    by_file.get(fact.document, ("unknown", 0))[0],
                    len(set(supported or []) & set(fact.cells)),
                    len(fact.cells),
                )
                for fact, supported in zip(facts, evidence.facts_stated, strict=False)
            ]
            tokens = sum(by_file.get(file, ("", 0))[1] for file in {fact.document for fact in facts})
            episodes.append(JudgedEpisode(label, setting, row.task_type, tuple(judged), tokens))
    distinct = {file: found for documents in collections.values() for file, found in documents.items()}
    kinds: dict[str, list[int]] = {}  # a document in several sets counted once (a file is named by its document)
    for kind, tokens in distinct.values():
        kinds.setdefault(kind, []).append(tokens)
    return episodes, kinds


def _setting_name(setting: RunSetting) -> str:
    return f"{setting.system} {setting.setting.split(', ')[0]}"


def table3(episodes: Sequence[JudgedEpisode], kinds: Mapping[str, list[int]]) -> tuple[list[str], list[list[str]]]:
    """Header and one line per document kind: its mean tokens a document, then per run (its setting and label)
    and split the process accuracy (%) over the fact rows of that kind."""
    runs = list(dict.fromkeys((episode.label, episode.setting) for episode in episodes))
    columns = [
        (label, setting, split)
        for label, setting in runs
        for split in SPLITS
        if any((e.label, e.setting, e.split) == (label, setting, split) for e in episodes)
    ]
    header = [
        "document kind",
        "tokens / document",
        *(f"{setting} ({label}) {split.capitalize()}" for label, setting, split in columns),
    ]
    body = []
    for kind in sorted({kind for episode in episodes for kind, _, _ in episode.rows}):
        line = [kind, f"{sum(kinds.get(kind, [0])) / max(1, len(kinds.get(kind, []))):,.0f}"]
        for column in columns:
            rows = [r for e in episodes if (e.label, e.setting, e.split) == column for r in e.rows if r[0] == kind]
            total = sum(cells for _, _, cells in rows)
            line.append(f"{100 * sum(covered for _, covered, _ in rows) / total:.1f}" if total else "–")
        body.append(line)
    return header, body


def mudabench_document_sections(
    paths: Sequence[Path], read: CollectionReader, names: Mapping[Path, str] | None, out: Path
) -> str:
    """Table 3 (report.md and `mudabench_table3.tex`) and Figure 4 (`mudabench_tokens.png`, .pdf); '' when no
    episode's fact rows were judged."""
    episodes, kinds = judged_episodes(paths, read, names)
    if not episodes:
        return ""
    header, body = table3(episodes, kinds)
    (out / "mudabench_table3.tex").write_text(paper_latex_table(header, body), encoding="utf-8")
    from harness.analysis.mudabench_figures import tokens_figure

    lines = [
        "### Process accuracy by document kind and chunk budget (Table 3, %)",
        "",
        "Per document kind (the collection index's doctype) its mean tokens a document, and per run setting and "
        "split Σ stated cells / Σ cells over the fact rows of that kind (judged at each episode's end). Also "
        "`mudabench_table3.tex`.",
        "",
        *markdown_grid(header, body),
        "",
        tokens_figure(episodes, out),
    ]
    return "\n".join(lines) + "\n"

"""`python -m harness annotate RUN --facts --judge MODEL[,MODEL...]`: the intermediate facts every finished
episode stated, by the fact judge, into RUN/fact_judgments.jsonl (results.jsonl is never changed). Every row is
asked (as MuDABench), or with `named_only` only the rows whose document the episode touched. A judge that gives
no reply to any row of the first episode asked stops the command at once, and judgments that all failed never
take the place of the file already there (`JudgesFailed`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from harness.core.facts import parse_facts
from harness.diagnostics.fact_judge import judge_facts, prompt_digest
from harness.records.events import EpisodeEndEvent, EpisodeStartEvent
from harness.records.fact_judgments import (
    ALL_ROWS,
    JUDGED,
    NAMED_ROWS,
    EpisodeFacts,
    FactRowJudgment,
    write_fact_judgments,
)
from harness.records.reading import is_finished, read_events
from harness.records.run_folder import RunFolder
from harness.run.judging.judges import JudgeOptions


class JudgesFailed(RuntimeError):
    """Every fact judgment so far failed: the command stops with the first failure's reason, writing nothing."""


def annotate_facts(
    run_dir: Path, options: JudgeOptions, console: Console, named_only: bool = False
) -> list[EpisodeFacts]:
    folder = RunFolder(run_dir)
    record = folder.read_record()
    aliases = record.config.model_aliases or {}
    panel = options.panel(folder.path.parent, "annotate --facts asks a judge of the panel", aliases)
    judged: list[EpisodeFacts] = []
    unlogged = 0
    answered = False
    """Whether any judge has supported a fact row yet (until then, a failure may be the whole panel's)."""
    for row in folder.latest_rows().values():
        if row.needs_rerun:
            continue
        path = folder.trajectory_path(row.domain, row.task_id, row.epoch)
        events = read_events(path)
        start = events[0].event if events else None
        if not isinstance(start, EpisodeStartEvent) or not is_finished(events):
            unlogged += 1
            continue
        if not start.task.facts:
            continue
        facts = parse_facts(start.task.facts, f"{path}:1: field 'task'")
        end = events[-1].event
        final_reply = end.submission if isinstance(end, EpisodeEndEvent) else None
        logged_events = [logged.event for logged in events]
        found = judge_facts(panel, start.task.question or "", facts, logged_events, final_reply, named_only)
        answered = answered or any(not one["failed"] and one["judges"] for one in found.rows)
        if not answered and (reason := _no_reply(found.rows)) is not None:
            raise JudgesFailed(
                f"the fact judge gave no reply to any of the {len(found.rows)} fact rows of {row.domain}/"
                f"{row.task_id}, the first episode asked: {reason}; {folder.fact_judgments_path} left as it was"
            )
        judged.append(
            EpisodeFacts(
                domain=row.domain,
                task_id=row.task_id,
                epoch=row.epoch,
                status=JUDGED,
                stated=found.counts,
                rows=[FactRowJudgment.model_validate(row) for row in found.rows],
                prompt=prompt_digest(panel.protocol),
                rows_asked=NAMED_ROWS if named_only else ALL_ROWS,
                cost_usd=found.cost_usd,
                calls={"made": found.made, "cached": found.cached},
            )
        )
    if not answered and (failed := _first_failure(judged)) is not None:
        raise JudgesFailed(f"every fact judgment failed ({failed}); {folder.fact_judgments_path} left as it was")
    write_fact_judgments(folder.fact_judgments_path, judged)
    _say(console, judged, unlogged, folder.fact_judgments_path)
    return judged


def _no_reply(rows: list[dict[str, Any]]) -> str | None:
    """The first call's error, when every judge asked about every row gave no reply at all; None otherwise."""
    calls = [judge for row in rows for judge in row["judges"]]
    if not calls or any(judge["failure"] != "JUDGE_CALL_FAILED" for judge in calls):
        return None
    return str(calls[0].get("error") or "no reply")


def _first_failure(judged: list[EpisodeFacts]) -> str | None:
    """How the first failed judgment failed (its error, else its failure kind); None when none failed."""
    for judge in (judge for one in judged for row in one.rows for judge in row.judges):
        if judge.failure:
            return judge.error or judge.failure
    return None


def _say(console: Console, judged: list[EpisodeFacts], unlogged: int, path: Path) -> None:
    failed = sum(one.stated.failed for one in judged if one.stated is not None)
    made = sum(one.calls["made"] for one in judged)
    cached = sum(one.calls["cached"] for one in judged)
    costs = [one.cost_usd for one in judged if one.cost_usd is not None]
    cost = f"${sum(costs):.4f}" if costs else "unknown"
    console.print(
        f"judged the facts of {len(judged)} episodes, {failed} fact rows whose judgment failed (counted as not "
        "stated)"
        + (f", {unlogged} without a finished trajectory" if unlogged else "")
        + f"; judge calls: {made} made, {cached} from the cache; judge cost {cost} (apart from the run's)"
        + f"; wrote {path}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )

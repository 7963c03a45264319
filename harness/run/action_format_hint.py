"""After a run whose model never made a tool call: the one line saying which `--action-format` to try (a local
server that does not pass the model its tools, or a model that writes its commands as text)."""

from __future__ import annotations

from harness.core.status import Status
from harness.episode.actions import NO_TOOL_CALL
from harness.records.events import ModelCallEvent
from harness.records.reading import read_events
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder

__all__ = ["action_format_hint"]


def action_format_hint(action_format: str, rows: list[ResultRow], folder: RunFolder) -> str | None:
    """The hint when, under `toolcall`, every episode of this batch ended on format errors for want of a tool call
    and none of its replies held one (read back from the trajectories, which are short then); else None."""
    if action_format != "toolcall" or not rows:
        return None
    if any(row.status != Status.FORMAT_ERRORS or row.detail != NO_TOOL_CALL for row in rows):
        return None
    for row in rows:
        for logged in read_events(folder.trajectory_path(row.domain, row.task_id, row.epoch)):
            if isinstance(logged.event, ModelCallEvent) and logged.event.response.tool_calls:
                return None
    return (
        f"no reply of the {len(rows)} episodes held a tool call (all ended format_errors): if the server does not "
        "pass the model its tools, or the model writes its commands as text, run again with --action-format text "
        "(the command in a ```bash block)"
    )

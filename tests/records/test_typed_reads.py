"""Events are read as their classes (harness/records/reading.py), never by string key, outside records/: one
place knows how a line is laid out. The raw line (`LoggedEvent.line`) is for what copies a log as written."""

from __future__ import annotations

import re

from tests.conftest import REPO

STRING_KEY_READS = re.compile(r"""\[["']event["']\]|\.get\(["']event["']|\bevents?\[[^\]]*\]\[["']""")
"""An event's kind read by key, or a field read from an event held as a dict (`event["turn"]`)."""
RAW_LINE = re.compile(r"\.line\b(?!\s*\+)")
COPIES_AS_LOGGED = {"harness/interop/inspect_export.py", "harness/interop/mini_swe_agent.py"}
"""The exports copy an episode's start and row exactly as logged."""


def _outside_records() -> dict[str, str]:
    return {
        str(path.relative_to(REPO)): path.read_text()
        for path in sorted((REPO / "harness").rglob("*.py"))
        if "records" not in path.relative_to(REPO / "harness").parts[:1]
    }


def test_no_event_is_read_by_string_key_outside_records():
    found = [
        f"{name}:{number}: {line.strip()}"
        for name, text in _outside_records().items()
        for number, line in enumerate(text.splitlines(), 1)
        if STRING_KEY_READS.search(line)
    ]
    assert found == []


def test_the_raw_line_is_read_only_where_a_log_is_copied_as_written():
    found = [
        f"{name}:{number}: {line.strip()}"
        for name, text in _outside_records().items()
        if name not in COPIES_AS_LOGGED
        for number, line in enumerate(text.splitlines(), 1)
        if RAW_LINE.search(line) and "start_mark" not in line and "mark.line" not in line
    ]
    assert found == []


def test_the_checks_catch_a_string_key_read():
    assert STRING_KEY_READS.search('if event["event"] == "model_call":')
    assert STRING_KEY_READS.search('kind = record.get("event")')
    assert STRING_KEY_READS.search('turn = events[-1]["turn"]')
    assert RAW_LINE.search('domain = events[0].line["domain"]')

"""Trajectories read back typed (records/reading.py): each line as its event class, every committed run folder
included, and a line of an unknown kind or of another schema as an UnknownEvent holding its fields."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.core.errors import InputError
from harness.core.json_text import json_text
from harness.core.reply import Reply, ToolCall, Usage
from harness.core.status import Status
from harness.records.events import EpisodeEndEvent, EpisodeStartEvent, ModelCallEvent, ObservationEvent
from harness.records.failure_labels import read_labels
from harness.records.reading import UnknownEvent, checked_events, event_of, logged_event, read_events
from harness.records.results import read_rows
from tests.conftest import REPO

FIXTURE_LOGS = sorted((REPO / "tests" / "fixtures").glob("schema*_run/episodes/*/*.jsonl"))


@pytest.mark.parametrize("log", FIXTURE_LOGS, ids=lambda path: f"{path.parts[-4]}/{path.name}")
def test_every_line_of_a_committed_run_folder_reads_as_its_class(log):
    events = read_events(log)
    assert [event.event.kind for event in events] == [
        json.loads(line)["event"] for line in log.read_text().splitlines()
    ]
    assert not [event for event in events if isinstance(event.event, UnknownEvent)]
    assert isinstance(events[0].event, EpisodeStartEvent) and isinstance(events[-1].event, EpisodeEndEvent)
    assert events[-1].event.row.status is Status.ANSWERED


def test_an_observation_reads_with_its_streams_in_full():
    events = read_events(REPO / "tests" / "fixtures" / "schema3_run" / "episodes" / "mini" / "t1.jsonl")
    observation = next(event.event for event in events if isinstance(event.event, ObservationEvent))
    assert observation.stderr == "a warning\n"
    assert "2020 | 40" in observation.stdout


def test_a_model_call_reads_with_its_time():
    line = {"event": "model_call", "time": 12.5, "turn": 1, "messages": [], "response": {"text": "hi"}}
    event = logged_event(line)
    assert event.event == ModelCallEvent(turn=1, messages=[], response=Reply(text="hi"))
    assert event.time == 12.5


def test_an_unknown_kind_reads_as_an_unknown_event():
    event = logged_event({"event": "teleport", "time": 1.0, "to": "mars"}).event
    assert isinstance(event, UnknownEvent) and (event.logged_kind, event.fields) == ("teleport", {"to": "mars"})


def test_a_line_with_fields_its_class_lacks_reads_as_an_unknown_event():
    event = logged_event({"event": "action", "time": 1.0, "turn": 1, "command": "ls", "shell": "zsh"}).event
    assert isinstance(event, UnknownEvent) and event.logged_kind == "action"


def test_a_line_missing_a_field_of_its_class_reads_as_an_unknown_event():
    event = logged_event({"event": "action", "time": 1.0, "command": "ls"}).event
    assert event == UnknownEvent(logged_kind="action", fields={"command": "ls"}, problem="field 'turn': missing")


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ({"event": "action", "turn": "1", "command": "ls"}, "field 'turn': Input should be a valid integer"),
        ({"event": "action", "turn": True, "command": "ls"}, "field 'turn': Input should be a valid integer"),
        ({"event": "action", "turn": 1, "command": ["ls"]}, "field 'command': Input should be a valid string"),
        (
            {"event": "model_call", "turn": 1, "messages": [], "response": {"text": 5}},
            "field 'response.text': Input should be a valid string",
        ),
        (
            {
                "event": "model_call",
                "turn": 1,
                "messages": [],
                "response": {"text": "", "usage": {"input_tokens": "9"}},
            },
            "field 'response.usage.input_tokens': Input should be a valid integer",
        ),
        (
            {"event": "model_call", "turn": 1, "messages": [], "response": {"text": "", "tool_calls": [{"id": 1}]}},
            "field 'response.tool_calls.0.id': Input should be a valid string",
        ),
        ({"event": "sandbox_ready", "sandbox": {}, "start_s": "0.5"}, "field 'start_s': Input should be a valid"),
    ],
)
def test_a_line_with_a_field_of_the_wrong_type_reads_as_an_unknown_event_naming_the_field(line, problem):
    """The reader checked field names only: `"turn": "1"` or a reply whose text is a number read as the event."""
    event = logged_event(line).event
    assert isinstance(event, UnknownEvent) and event.logged_kind == line["event"]
    assert event.problem.startswith(problem)
    with pytest.raises(ValueError, match=f"^{line['event']} {re.escape(problem)}"):
        event_of(line)


def test_a_users_log_with_a_wrongly_typed_line_is_one_line_naming_file_line_and_field(tmp_path):
    log = tmp_path / "t1.jsonl"
    lines = [{"event": "action", "time": 1.0, "turn": 1, "command": "ls"}]
    lines.append({"event": "observation", "time": 2.0, "turn": 1, "exit_code": "0", "stdout": "", "stderr": ""})
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(InputError) as raised:
        checked_events(log)
    assert str(raised.value) == f"{log}:2: observation field 'exit_code': Input should be a valid integer"


def test_a_model_call_reads_its_reply_typed_and_writes_back_only_the_fields_its_line_had():
    response = {
        "text": "hi",
        "tool_calls": [{"id": "c", "name": "bash", "arguments": "{}"}],
        "usage": {"output_tokens": 3},
    }
    event = logged_event({"event": "model_call", "turn": 1, "messages": [], "response": response}).event
    assert isinstance(event, ModelCallEvent)
    assert event.response.tool_calls == [ToolCall(id="c", name="bash", arguments="{}")]
    assert event.response.usage == Usage(output_tokens=3) and event.response.cost_usd is None
    assert event.to_dict()["response"] == response
    assert list(event.to_dict()["response"]) == ["text", "tool_calls", "usage"]


def test_a_duration_logged_as_an_int_is_written_back_as_an_int():
    event = logged_event({"event": "sandbox_ready", "sandbox": {}, "start_s": 0}).event
    assert event.to_dict() == {"sandbox": {}, "start_s": 0} and json.dumps(event.to_dict()["start_s"]) == "0"


def _first_row() -> dict:
    results = REPO / "tests" / "fixtures" / "schema3_run" / "results.jsonl"
    return json.loads(results.read_text().splitlines()[0])


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"turns": "3"}, "field 'turns': Input should be a valid integer"),
        ({"status": "teleported"}, "field 'status': Input should be"),
        ({"cost_usd": "0.1"}, "field 'cost_usd': Input should be a valid number"),
        ({"reasons": "none"}, "field 'reasons': Input should be a valid array"),
    ],
)
def test_a_results_row_with_a_field_of_the_wrong_type_is_one_line_naming_file_line_and_field(tmp_path, change, problem):
    """Rows were built with `cls(**known)`: a `"turns": "3"` row read as a row whose turns were a string."""
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(_first_row()) + "\n" + json.dumps(_first_row() | change) + "\n")
    with pytest.raises(InputError) as raised:
        read_rows(path)
    assert str(raised.value).startswith(f"{path}:2: {problem}")


def test_a_results_row_reads_typed_and_writes_back_the_same_bytes(tmp_path):
    row = _first_row() | {"cost_usd": 0, "queue_s": 0}
    [read] = read_rows(_written(tmp_path, row))
    assert read.status is Status.ANSWERED and read.turns == row["turns"]
    assert json_text(read.to_dict()) == json_text(row)


def test_a_failure_label_with_a_field_of_the_wrong_type_is_one_line_naming_its_line_and_field(tmp_path):
    label = {"domain": "d", "task_id": "t", "epoch": 1, "status": "labelled", "modes": {"m": "2"}, "judges": []}
    path = _written(tmp_path, label | {"prompt": "p"})
    with pytest.raises(InputError) as raised:
        read_labels(path)
    assert str(raised.value) == f"{path}:1: field 'modes.m': Input should be a valid integer"


def _written(tmp_path, line: dict) -> Path:
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(line) + "\n")
    return path

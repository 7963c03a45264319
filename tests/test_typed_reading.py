"""Trajectories read back typed (records/reading.py): each line as its event class, every committed run folder
included, and a line of an unknown kind or of another schema as an UnknownEvent holding its fields."""

from __future__ import annotations

import json

import pytest

from harness.core.status import Status
from harness.records.events import EpisodeEndEvent, EpisodeStartEvent, ModelCallEvent, ObservationEvent
from harness.records.reading import UnknownEvent, logged_event, read_events
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
    event = logged_event({"event": "model_call", "time": 12.5, "turn": 1, "messages": [], "response": {}})
    assert event.event == ModelCallEvent(turn=1, messages=[], response={})
    assert event.time == 12.5


def test_an_unknown_kind_reads_as_an_unknown_event():
    event = logged_event({"event": "teleport", "time": 1.0, "to": "mars"}).event
    assert event == UnknownEvent(logged_kind="teleport", fields={"to": "mars"})


def test_a_line_with_fields_its_class_lacks_reads_as_an_unknown_event():
    event = logged_event({"event": "action", "time": 1.0, "turn": 1, "command": "ls", "shell": "zsh"}).event
    assert isinstance(event, UnknownEvent) and event.logged_kind == "action"


def test_a_line_missing_a_field_of_its_class_reads_as_an_unknown_event():
    event = logged_event({"event": "action", "time": 1.0, "command": "ls"}).event
    assert event == UnknownEvent(logged_kind="action", fields={"command": "ls"})

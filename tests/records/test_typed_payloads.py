"""The events' payloads are records to their leaves (issue 47): a line read and written again is the same bytes,
an older line's keys included (an attempt without `in_flight_limit`, a task record without `type`), and a leaf of
the wrong type is a wrong line, not a dict carried along."""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import is_typeddict

from harness.records.events import Event, ModelCallEvent, ModelErrorEvent
from harness.records.reading import UnknownEvent, event_of

REPO = Path(__file__).resolve().parents[2]

ATTEMPT = {"error": "RateLimitError", "status": 429, "message": "slow down", "attempt": 1, "duration_s": 0.5}
OLDER_ATTEMPT = {"status": 500, "error": "InternalServerError", "message": "boom"}
"""An attempt as another (older) harness wrote it: fewer keys, in another order."""
LINES = [
    {
        "event": "episode_start",
        "time": 1.5,
        "schema_version": 3,
        "task_id": "t1",
        "domain": "mini",
        "task": {
            "question": "q",
            "answer": "42",
            "answer_format": None,
            "grader": "numeric",
            "rel_tol": 0,
            "abs_tol": 0.5,
            "type": None,
            "collection": None,
            "facts": [{"document": "a.md", "cells": {"units": 40, "events": [{"n": None}]}, "schema": {}}],
        },
        "task_digest": "sha256:1",
        "model": "oracle",
        "sandbox": {"backend": "plugin", "image": {"id": 3}, "limits": None},
    },
    {
        "event": "episode_start",
        "time": 1,
        "schema_version": 2,
        "task_id": "t1",
        "domain": "mini",
        "task": {"answer": "42", "grader": "numeric"},
        "task_digest": "sha256:1",
        "model": None,
        "sandbox": {},
    },
    {"event": "sandbox_ready", "time": 2.0, "sandbox": {"name": "no backend given", "backend": "x"}, "start_s": 0},
    {
        "event": "model_error",
        "time": 3.0,
        "turn": 1,
        "messages": [],
        "error": "gave up",
        "attempts": [ATTEMPT, ATTEMPT | {"wait_s": 1.0, "on_agent_clock": False, "in_flight_limit": 4}],
        "latency_s": 2,
    },
    {
        "event": "model_call",
        "time": 3.5,
        "turn": 2,
        "messages": [
            {"role": "system", "content": "s"},
            {
                "content": [{"type": "text", "text": "look"}, {"type": "image", "image": {"sha256": "ab"}}],
                "role": "user",
            },
            {"role": "tool", "tool_call_id": "c1", "content_from": {"event": "observation", "turn": 1}},
            {"role": "user", "content": "q", "extra": {"returncode": 0}},
        ],
        "response": {
            "text": "",
            "tool_calls": [{"id": "c2", "name": "bash", "arguments": "{}"}],
            "provider_state": {"thinking_blocks": [{"type": "thinking", "signature": "x"}]},
        },
    },
    {
        "event": "judge_call",
        "time": 4.0,
        "model": "m",
        "prompt": "sha256:2",
        "params": {"temperature": 0.0},
        "cache_key": "k",
        "cached": False,
        "verdict": None,
        "reply": None,
        "dropped_params": [],
        "failure": "JUDGE_CALL_FAILED",
        "error": "x",
        "attempts": [ATTEMPT, OLDER_ATTEMPT],
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": None,
        "latency_s": 0.1,
    },
    {
        "event": "evidence",
        "time": 5.0,
        "method": "m",
        "leakage_method": "l",
        "evidence": ["a.md"],
        "touches": [{"document": "a.md", "first_turn": 1, "reached_turn": None, "how": ["listed"]}],
        "opens": None,
    },
]


def _line(fields: dict) -> str:
    return json.dumps(fields, ensure_ascii=False)


@pytest.mark.parametrize("line", LINES, ids=[f"{n}-{line['event']}" for n, line in enumerate(LINES)])
def test_a_line_read_and_written_again_is_the_same_bytes(line):
    event = event_of(line)
    assert not isinstance(event, UnknownEvent), event
    again = {"event": line["event"], "time": line["time"], **event.to_dict()}
    assert _line(again) == _line(line)


@pytest.mark.parametrize(
    ("kind", "path", "value", "field"),
    [
        (3, ("attempts", 0, "status"), "429", "attempts.0.status"),
        (4, ("messages",), "hello", "messages"),
        (4, ("messages", 1), "hello", "messages"),
        (3, ("attempts", 1, "wait_s"), True, "attempts.1.wait_s"),
        (0, ("task", "answer"), 42, "task.answer"),
        (0, ("task", "rel_tol"), "0.01", "task.rel_tol"),
        (6, ("touches", 0, "first_turn"), "1", "touches.0.first_turn"),
        (5, ("params", "temperature"), "hot", "params.temperature"),
        (5, ("params", "top_p"), 1, "params.top_p"),
    ],
)
def test_a_leaf_of_the_wrong_type_is_a_wrong_line_naming_its_field(kind, path, value, field):
    line = json.loads(json.dumps(LINES[kind]))
    place = line
    for step in path[:-1]:
        place = place[step]
    place[path[-1]] = value
    with pytest.raises(ValueError, match=f"field '{re.escape(field)}'"):
        event_of(line)


def _untyped(annotation: Any, path: str) -> Iterator[str]:
    """The places under ANNOTATION typed as a bare `dict[str, Any]`."""
    if annotation == dict[str, Any]:
        yield path
    elif typing.get_origin(annotation) is typing.Annotated:
        yield from _untyped(typing.get_args(annotation)[0], path)
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        for name, field in annotation.model_fields.items():
            yield from _untyped(field.annotation, f"{path}.{name}")
    elif is_typeddict(annotation):
        for name, hint in typing.get_type_hints(annotation).items():
            yield from _untyped(hint, f"{path}.{name}")
    else:
        for argument in typing.get_args(annotation):
            yield from _untyped(argument, path)


def _events(cls: type[Event]) -> Iterator[type[Event]]:
    for subclass in cls.__subclasses__():
        yield subclass
        yield from _events(subclass)


def test_no_event_holds_an_untyped_dict_but_the_providers_own_state():
    """Messages, their parts and tool calls are typed (core/messages.py); what is left a dict is a provider's
    opaque state and the line of an event this harness does not know, kept as it was."""
    untyped = {place for event in _events(Event) for place in _untyped(event, event.__name__)}
    assert untyped == {"ModelCallEvent.response.provider_state", "UnknownEvent.fields"}
    assert "Message" in str(typing.get_type_hints(ModelCallEvent)["messages"])


def test_an_attempt_is_read_by_its_fields():
    event = event_of(LINES[3])
    assert isinstance(event, ModelErrorEvent)
    assert [(one.status, one.wait_s, one.in_flight_limit) for one in event.attempts] == [
        (429, None, None),
        (429, 1.0, 4),
    ]


FACT_JUDGES = [
    {
        "model": "m",
        "cache_key": "k1",
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": None,
        "cached": True,
        "calls": 0,
        "supported": ["units"],
        "failure": None,
    },
    {
        "model": "m",
        "cache_key": "k2",
        "input_tokens": 10,
        "output_tokens": 2,
        "cost_usd": 0.001,
        "supported": None,
        "failure": "JUDGE_CALL_FAILED",
        "error": "boom",
        "reply": None,
        "cached": False,
        "calls": 0,
        "earlier": [{"failure": "JUDGE_MALFORMED", "reply": "?"}],
    },
]
LABEL_JUDGES = [
    {
        "model": "m",
        "cache_key": "k1",
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": None,
        "cached": True,
        "labels": [{"mode": "gave_up", "turn": 2, "reason": "r"}],
        "failure": None,
    },
    {
        "model": "m",
        "cache_key": "k2",
        "input_tokens": 5,
        "output_tokens": 1,
        "cost_usd": 0,
        "cached": False,
        "labels": None,
        "failure": "JUDGE_MALFORMED",
        "reply": "?",
    },
]


def test_fact_judgments_and_labels_read_and_written_again_are_the_same_bytes(tmp_path):
    from harness.records.fact_judgments import read_fact_judgments, write_fact_judgments
    from harness.records.failure_labels import read_labels, write_labels

    episode = {"domain": "mini", "task_id": "t1", "epoch": 1}
    facts = episode | {
        "status": "judged",
        "stated": None,
        "prompt": "sha256:1",
        "cost_usd": 0.001,
        "calls": {"made": 1, "cached": 1},
        "rows_asked": "all",
    }
    facts = {**facts, "rows": [{"document": "a.md", "supported": ["units"], "failed": False, "judges": FACT_JUDGES}]}
    order = ["domain", "task_id", "epoch", "status", "stated", "rows", "prompt", "cost_usd", "calls", "rows_asked"]
    facts_line = json.dumps({name: facts[name] for name in order}, ensure_ascii=False) + "\n"
    labels_line = (
        json.dumps(
            episode
            | {
                "status": "labelled",
                "modes": {"gave_up": 2},
                "judges": LABEL_JUDGES,
                "prompt": "sha256:2",
                "rule_mode": None,
                "cost_usd": 0,
                "trajectory_chars": 10,
                "calls": {"made": 1, "cached": 1},
            },
            ensure_ascii=False,
        )
        + "\n"
    )
    (tmp_path / "facts.jsonl").write_text(facts_line)
    (tmp_path / "labels.jsonl").write_text(labels_line)
    judged, labelled = read_fact_judgments(tmp_path / "facts.jsonl"), read_labels(tmp_path / "labels.jsonl")
    assert judged[0].rows[0].judges[1].earlier[0].reply == "?"
    assert labelled[0].judges[0].labels[0].turn == 2
    write_fact_judgments(tmp_path / "facts.jsonl", judged)
    write_labels(tmp_path / "labels.jsonl", labelled)
    assert (tmp_path / "facts.jsonl").read_text() == facts_line
    assert (tmp_path / "labels.jsonl").read_text() == labels_line


def test_a_judge_entry_of_the_wrong_type_is_a_wrong_line(tmp_path):
    from harness.core.errors import InputError
    from harness.records.failure_labels import read_labels

    judge = LABEL_JUDGES[0] | {"labels": [{"mode": "gave_up", "turn": "2", "reason": "r"}]}
    line = {
        "domain": "mini",
        "task_id": "t1",
        "epoch": 1,
        "status": "labelled",
        "modes": {},
        "judges": [judge],
        "prompt": "p",
    }
    (tmp_path / "labels.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(InputError, match=re.escape("judges.0.labels.0.turn")):
        read_labels(tmp_path / "labels.jsonl")


def _fixture_record() -> dict:
    from harness.core.yaml_safe import load_yaml

    path = REPO / "tests" / "fixtures" / "schema3_run" / "run.yaml"
    return load_yaml(path.read_text(encoding="utf-8"), path)


def test_a_run_record_read_and_written_again_is_the_same_yaml_its_older_keys_and_order_kept():
    from harness.core.yaml_safe import dump_yaml
    from harness.records.run_record import RunRecord

    data = _fixture_record()
    data["protocol"] = {"retired_setting": 1, **data["protocol"]}  # a key an older harness wrote, first
    data["model"] = {"max_output_tokens": None, **(data["model"] or {})}
    record = RunRecord.from_dict(data)
    assert record.protocol.max_turns == data["protocol"]["max_turns"]
    assert record.config.model == data["config"]["model"]
    assert dump_yaml(record.to_dict()) == dump_yaml(data)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [("protocol", "max_turns", "200"), ("config", "epochs", 1.5), ("model", "temperature", "hot")],
)
def test_a_run_record_section_of_the_wrong_type_is_refused(section, key, value):
    from harness.records.run_record import RunRecord

    data = _fixture_record()
    data[section] = {**(data[section] or {}), key: value}
    with pytest.raises(ValueError, match=f"field '{section}.{key}': "):
        RunRecord.from_dict(data)

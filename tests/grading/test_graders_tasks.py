"""Task fields for the other grader families: abs_tol, type and collection, each checked with a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.core.errors import InputError
from harness.inputs.tasks import Task, collection_of, load_task_file, task_digest


def write_tasks(tmp_path: Path, *rows: dict) -> Path:
    path = tmp_path / "fin.jsonl"
    path.write_text("".join(json.dumps({"domain": "fin", "question": "q?"} | row) + "\n" for row in rows))
    return path


def test_new_fields_load_into_the_task(tmp_path):
    path = write_tasks(
        tmp_path,
        {
            "id": "t1",
            "answer": "0.0",
            "grader": "numeric_tol",
            "abs_tol": 0.05,
            "type": "numeric_tolerance",
            "collection": "fin-doc-set-1",
        },
    )
    task = load_task_file(path)[0]
    assert (task.abs_tol, task.type, task.collection, collection_of(task)) == (
        0.05,
        "numeric_tolerance",
        "fin-doc-set-1",
        "fin-doc-set-1",
    )


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"answer": "1.0", "abs_tol": -1}, "fin.jsonl:1: field 'abs_tol': -1 is not a finite non-negative number"),
        ({"answer": "1.0", "abs_tol": True}, "fin.jsonl:1: field 'abs_tol': True is not a finite"),
        ({"answer": "1.0", "type": " "}, "fin.jsonl:1: field 'type': must be a non-empty string"),
        ({"answer": "1.0", "type": 3}, "fin.jsonl:1: field 'type': wrong type int"),
        ({"answer": "1.0", "collection": "../etc"}, "fin.jsonl:1: field 'collection': '../etc' is not a domain name"),
        ({"answer": "1.0", "grader": "numeric_tol"}, "fin.jsonl:1: field 'answer': the numeric_tol grader needs"),
        ({"answer": "A, A", "grader": "multi_choice"}, "fin.jsonl:1: field 'answer': 'A, A': letters must be"),
        ({"answer": "X, x", "grader": "set"}, "fin.jsonl:1: field 'answer': 'X, x': item 'x' appears twice"),
    ],
)
def test_bad_new_fields_are_one_line_errors(tmp_path, row, message):
    with pytest.raises(InputError) as caught:
        load_task_file(write_tasks(tmp_path, {"id": "t1"} | row))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_digest_of_a_task_without_new_fields_is_unchanged():
    # The digest main computed for this task before the new fields existed: resumes of older runs keep their rows.
    task = Task("t1", "fin", "q?", "1.0")
    assert task_digest(task) == "sha256:45775cf20c6a6b11"
    assert task_digest(Task("t1", "fin", "q?", "1.0", abs_tol=0.1)) != task_digest(task)

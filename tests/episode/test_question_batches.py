"""FinDocMRE's batches (episode/solvers/question_batches.py) and the reading of a batch's reply
(episode/solvers/answer_list.py): pure functions, no run."""

from __future__ import annotations

from harness.episode.solvers.answer_list import read_answer_list
from harness.episode.solvers.question_batches import question_batches
from harness.inputs.tasks import Task


def _task(number: int, document: str) -> Task:
    return Task(id=f"q{number}", domain="findocmre", question="?", answer="1", evidence=[document])


def test_a_documents_questions_are_batched_in_file_order_and_split_past_ten():
    tasks = [_task(n, "a.md" if n % 12 else "b.md") for n in range(1, 26)]  # q12 and q24 are b's
    of_a = [task.id for task in tasks if task.evidence == ["a.md"]]
    batches = question_batches(tasks)
    found = {batch.id: [task.id for task in batch.tasks] for batch in batches.values()}
    assert found == {
        "findocmre/a.md#1": of_a[:10],
        "findocmre/a.md#2": of_a[10:20],
        "findocmre/a.md#3": of_a[20:],
        "findocmre/b.md#1": ["q12", "q24"],
    }
    assert (
        batches[("findocmre", "q25")].id == "findocmre/a.md#3"
        and batches[("findocmre", "q25")].position(tasks[24]) == 3
    )


def test_the_reply_list_is_read_one_answer_per_question():
    reply = 'Done.\n```json\n[{"answer": "C"}, {"answer": 12.5}, {"answer": ["A", "D"]}, {"answer": "text, more"}]\n```'
    assert [item.answer for item in read_answer_list(reply, 4)] == ["C", "12.5", "AD", "text, more"]


def test_a_garbled_element_costs_its_question_only():
    reply = '[{"answer": "C"}, {"answer": 12.5,, }, {"answer: "B"}, {"answer": "7"}]'
    items = read_answer_list(reply, 5)
    assert [item.answer for item in items] == ["C", None, None, "7", None]
    assert items[1].problem == 'answer 2 of 5: not JSON: {"answer": 12.5,, }'
    assert items[2].problem == 'answer 3 of 5: not JSON: {"answer: "B"}'
    assert items[4].problem == "answer 5 of 5: none (the reply's list has 4 answers for 5 questions)"


def test_prose_around_the_list_and_elements_of_another_shape():
    reply = 'Figure [1] shows it. [{"answer": "A"}, {"ans": "B"}, null, {"answer": true}] as in [2].'
    items = read_answer_list(reply, 4)
    assert [item.answer for item in items] == ["A", None, None, None]
    assert [item.problem for item in items[1:]] == [
        'answer 2 of 4: not {"answer": ...} but {"ans": "B"}',
        'answer 3 of 4: not {"answer": ...} but null',
        "answer 4 of 4: its answer is true, not a string",
    ]
    assert {item.problem for item in read_answer_list("I cannot answer.", 2)} == {
        'the reply holds no JSON list of {"answer": ...}'
    }

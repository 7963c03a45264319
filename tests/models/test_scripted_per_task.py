"""A scripted file may map task ids to their own replies, with a default list for the rest: two tasks, one
file, one run."""

from __future__ import annotations

import json

import yaml


def three_tasks(mini) -> None:
    task = {"domain": "mini", "question": "Q?", "answer": "42"}
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps({"id": i, **task}) + "\n" for i in ("a", "b", "c")))


def test_each_task_plays_its_own_replies_and_the_rest_the_default(mini):
    three_tasks(mini)
    script = mini.root / "per-task.yaml"
    script.write_text(
        yaml.safe_dump(
            {
                "tasks": {"a": [{"bash": "echo 40"}, "<answer>42</answer>"], "mini/b": ["<answer>7</answer>"]},
                "default": ["<answer>1</answer>"],
            }
        )
    )
    outcome = mini.run("--model", f"scripted:{script}")
    assert outcome.exit_code == 0, outcome.output
    rows = {row["task_id"]: row for row in outcome.rows}
    assert {task: (row["answer"], row["turns"]) for task, row in rows.items()} == {
        "a": ("42", 2),
        "b": ("7", 1),
        "c": ("1", 1),
    }


def test_a_selected_task_without_replies_or_default_is_refused_before_the_run(mini):
    three_tasks(mini)
    script = mini.root / "partial.yaml"
    script.write_text(yaml.safe_dump({"tasks": {"a": ["<answer>42</answer>"]}}))
    outcome = mini.run("--model", f"scripted:{script}")
    assert outcome.exit_code == 2
    assert "partial.yaml: no replies for task 'b' and no 'default' list" in outcome.output
    assert not outcome.run_dir.exists()


def test_a_bad_reply_in_a_tasks_list_names_the_task_and_item(mini):
    script = mini.root / "bad.yaml"
    script.write_text(yaml.safe_dump({"tasks": {"t1": ["fine", {"bash": 3}]}}))
    outcome = mini.run("--model", f"scripted:{script}")
    assert outcome.exit_code == 2 and "bad.yaml: tasks: t1: item 2" in outcome.output

"""The FinDocMRE paper's judge (its Table 15) as the findocmre profile's default: bare integers read, the paper's
panel averaged, a judge failure counted as docs/GRADERS.md §4.3 says; the judges on real HTTP on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main
from harness.grading import GoldSpec, Verdict, grade
from harness.grading.judge import JudgePanel
from harness.grading.judge_cache import JudgeCache
from harness.grading.judge_protocol import load_protocol
from harness.inputs.profiles import load_profile
from harness.models.aliases import resolve_model
from harness.run.judging.judges import litellm_judges
from tests.helpers.openai_server import reply

pytestmark = pytest.mark.usefixtures("openai_key")

TABLE_15 = (
    "You are a professional financial domain expert. I will provide an open-ended financial question, its reference "
    "answer, and an answer to be evaluated. Please provide a score for the evaluated answer based on the question "
    "and the reference answer.\n\n"
    "Scoring Criteria:\n"
    "Scoring must be an integer between 0 and 5, where 0 is the lowest and 5 is the highest. The reference answer "
    "is for guidance only and does not necessarily represent a 5-point (perfect) answer.\n\n"
    "Output Format Requirement:\n"
    "Provide only a single integer between 0 and 5. Do not include any punctuation or other content.\n\n"
    "The Question is: {question}\n\n"
    "The reference answer is: {context}\n\n"
    "The answer to be evaluated is: {model_answer}"
)
"""The paper's prompt as its Table 15 prints it, its `[Input Template]` heading left out."""
GOLD = GoldSpec("Margins widened as input costs fell.", question="What happened to the margins, and why?")
SUBMISSION = "<answer>They widened: costs fell faster than prices.</answer>"


def paper_panel(server, tmp_path: Path) -> JudgePanel:
    judges = ["openai/gemini-2.5-flash", "openai/gpt-4o", "openai/qwen3-max"]
    completion = litellm_judges(server.url, max_retries=0)
    protocol = load_protocol(Path("findocmre"))
    return JudgePanel(judges, 2, JudgeCache(tmp_path / "cache"), completion, score_protocol=protocol)


def test_the_papers_prompt_is_asked_and_bare_integers_are_read_and_averaged(openai_server, tmp_path):
    openai_server.push(reply("4"), reply("5\n"), reply(" 3 "))
    graded = grade("score", SUBMISSION, GOLD, paper_panel(openai_server, tmp_path))
    assert (graded.verdict, graded.score, graded.judge_scores) == (Verdict.WRONG_VALUE, 4.0, [4, 5, 3])
    asked = TABLE_15.format(
        question=GOLD.question, context=GOLD.answer, model_answer="They widened: costs fell faster than prices."
    )
    assert [request["messages"] for request in openai_server.requests] == [[{"role": "user", "content": asked}]] * 3


@pytest.mark.parametrize("unreadable", ["Score: 4", "4.", "6", '{"score": 4}'])
def test_a_reply_that_is_not_one_integer_in_range_gives_no_score_and_the_others_are_averaged(
    openai_server, tmp_path, unreadable
):
    openai_server.push(reply("5"), reply(unreadable), reply("3"))
    graded = grade("score", SUBMISSION, GOLD, paper_panel(openai_server, tmp_path))
    assert (graded.score, graded.judge_scores) == (4.0, [5, None, 3])
    assert "JUDGE_MALFORMED" in graded.reasons


def test_fewer_scores_than_the_quorum_is_judge_error(openai_server, tmp_path):
    openai_server.push(reply("4"), reply("four"), reply("4 out of 5"))
    graded = grade("score", SUBMISSION, GOLD, paper_panel(openai_server, tmp_path))
    assert (graded.verdict, graded.score, graded.judge_scores) == (Verdict.JUDGE_ERROR, None, [4, None, None])


def test_the_profile_s_default_panel_is_the_papers_three_judges_with_its_prompt():
    profile = load_profile("findocmre")
    panel = [resolve_model(name, {}).model for name in profile.settings["judge"].split(",")]
    assert panel == ["gemini/gemini-2.5-flash", "openai/gpt-4o", "dashscope/qwen3-max"]
    assert load_protocol(profile.settings["judge_prompt"]) == load_protocol(Path("findocmre"))


def test_a_run_under_the_profile_asks_its_judges_the_papers_prompt(mini, openai_server):
    """A panel given on the command line still asks the profile's prompt and reads bare integers."""
    task = json.loads((mini.tasks_dir / "mini.jsonl").read_text()) | {"grader": "score", "answer": "42 units"}
    task.pop("answer_format")
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task | {"type": "open_ended"}) + "\n")
    openai_server.push(reply("5"), reply("4"), reply("3"))
    outcome = mini.run(
        *("--model", mini.script(["<answer>42 units in all</answer>"]), "--profile", "findocmre"),
        *("--judge", "openai/a,openai/b,openai/c", "--judge-api-base", openai_server.url),
    )
    assert outcome.exit_code == 0, outcome.output
    [row] = outcome.rows
    assert (row["score"], row["judge_scores"]) == (4.0, [5, 4, 3])
    assert openai_server.requests[0]["messages"][0]["content"].startswith(TABLE_15[:60])
    recorded = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["protocol"]["judge"]
    assert recorded["score_prompt"]["reply"] == "integer" and recorded["score_prompt"]["range"] == [0, 5]
    assert main(["report", str(outcome.run_dir), "--out", str(mini.root / "report")]) == 0
    report = (mini.root / "report" / "report.md").read_text()
    table3 = report.split("## FinDocMRE as its paper reports it: Table 3")[1].split("##")[0]
    assert "| – | – | – | – | 4.00 (80.0) | 80.00 |" in table3  # open-ended only: 4 raw, x20 = 80
    assert "| openai/a | 5.00 / 1 |" in report and "| openai/c | 3.00 / 1 |" in report  # Table 9: each judge


def test_an_integer_reply_with_a_verdict_rule_is_a_one_line_error(tmp_path):
    path = tmp_path / "judge.yaml"
    path.write_text(
        yaml.safe_dump(
            {"template": "<<ANSWER>>", "reading": {"reply": "integer"}, "verdict": {"field": "v", "correct": [True]}}
        )
    )
    from harness.core.errors import InputError

    with pytest.raises(InputError, match=r"field 'reading.reply': integer is read as a score"):
        load_protocol(path)

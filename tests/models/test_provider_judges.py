"""The judge panel's calls through a provider fake: Gemini judges served by the loopback generateContent API."""

from __future__ import annotations

import json

from harness.grading import GoldSpec, Verdict
from harness.grading.judge import JudgePanel
from harness.grading.judge_cache import JudgeCache
from harness.run.judging.judges import litellm_judges
from tests.helpers.providers.gemini_generate import GeminiGenerateContent
from tests.helpers.providers.loopback import Turn

GOLD = GoldSpec("Revenue grew 12.3% to 4.5 billion", question="How did revenue change in 2023?")
SUBMISSION = "<answer>It rose by 12.3%, to 4.5bn</answer>"


def verdicts(*texts: str):
    """Each judge call's verdict in turn (a judge's conversation never has a model turn)."""
    replies = iter(texts)
    return lambda model_turns: Turn(text=json.dumps({"verdict": next(replies), "reason": "same figures"}))


def test_a_panel_of_gemini_judges_grades_through_googles_own_api(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "loopback-key")
    with GeminiGenerateContent(verdicts("CORRECT", "INCORRECT", "CORRECT")) as fake:
        judges = ["gemini/gemini-3.1-pro-preview", "gemini/gemini-3.1-flash-lite", "gemini/gemini-2.5-pro"]
        completion = litellm_judges(fake.api_base + "/v1beta", max_retries=0)
        grade = JudgePanel(judges, 2, JudgeCache(tmp_path / "cache"), completion).grade(SUBMISSION, GOLD)
    assert (grade.verdict, grade.reasons, grade.parsed_value) == (Verdict.CORRECT, ["JUDGES_DISAGREE"], "2/3 CORRECT")
    assert fake.rule_breaks == []
    assert sorted(path.split("/models/")[1] for path in fake.paths) == [
        "gemini-2.5-pro:generateContent",
        "gemini-3.1-flash-lite:generateContent",
        "gemini-3.1-pro-preview:generateContent",
    ]
    assert all("It rose by 12.3%" in json.dumps(request["contents"]) for request in fake.requests)

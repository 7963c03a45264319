"""An agent with vision on the generated FinDocMRE set (local sandbox): it finds the page that captions the figure a
question names, cuts the chart out of that page's kept image with the sandbox's own tools, looks at it, and
answers by measuring it. The same model without vision has only the documents' text, where no value is."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main
from harness.inputs.prompts import load_prompts
from harness.records.jsonl import read_jsonl
from tests.helpers.findocmre_models import looking_agent
from tests.helpers.providers.chat_completions import ChatCompletionsProvider
from tests.helpers.providers.chat_rules import SGLANG
from tests.run.test_zero_shot import LOCAL_MODEL, run

TASKS = ("--task-id", "huaxia-2023-exact", "--task-id", "acme-2024-ratio")
"""A Chinese one-chart question and an English two-chart one."""


@pytest.fixture
def agent(monkeypatch) -> Iterator[ChatCompletionsProvider]:
    monkeypatch.setenv(SGLANG.key_variable, "loopback-key")
    fake = ChatCompletionsProvider(SGLANG)
    fake.respond = looking_agent(fake)
    fake.start()
    yield fake
    fake.stop()


def test_with_vision_the_agent_crops_the_charts_looks_and_answers_right(
    findocmre_project: Path, tmp_path: Path, agent, capsys
):
    arguments = ("--model", LOCAL_MODEL, "--api-base", agent.base_url, "--sandbox", "local", "--vision", *TASKS)
    code, run_dir = run(findocmre_project, tmp_path, "vision", *arguments)
    rows = {row["task_id"]: row for row in read_jsonl(run_dir / "results.jsonl")}
    assert code == 0 and agent.broken == []
    assert {task: row["verdict"] for task, row in rows.items()} == {
        "huaxia-2023-exact": "correct",
        "acme-2024-ratio": "correct",
    }
    events = read_jsonl(run_dir / "episodes" / "findocmre" / "acme-2024-ratio.jsonl")
    views = [event for event in events if event["event"] == "image_view"]
    assert [view["path"] for view in views] == ["/tmp/figure1.png", "/tmp/figure2.png"]
    assert all(
        view["image"] is not None and (run_dir / "images" / f"{view['image']['sha256']}.png").is_file()
        for view in views
    )
    assert rows["acme-2024-ratio"]["turns"] == 4  # crop, look, look, answer
    system = events[[event["event"] for event in events].index("model_call")]["messages"][0]["content"]
    assert "`view_image` shows you an image file" in system and "the folder <name>.images/" in system
    recorded = yaml.safe_load((run_dir / "run.yaml").read_text())["protocol"]["prompts"]
    assert recorded == load_prompts(vision=True).digest != load_prompts().digest

    zero_shot = ("--model", LOCAL_MODEL, "--api-base", agent.base_url, "--zero-shot", "cropped", *TASKS)
    assert run(findocmre_project, tmp_path, "paper", *zero_shot)[0] == 0
    capsys.readouterr()
    assert main(["show", str(tmp_path / "paper"), "acme-2024-ratio"]) == 0
    shown = capsys.readouterr().out
    assert "the prompt's 2 images" in shown and shown.count("400x300 image/png") == 2  # the two embedded charts
    assert "fig1 (page 2): documents_acme-2024.images/figure-p002-1.png" in shown  # where each came from
    assert main(["view", "--static", str(tmp_path / "site"), str(tmp_path / "paper")]) == 0
    pages = [json.loads(path.read_text()) for path in (tmp_path / "site" / "episodes").glob("*.json")]
    shown_images = [view["src"] for page in pages for step in page["steps"] for view in step.get("prompt_images", [])]
    assert len(shown_images) == 3  # one chart of huaxia-2023-exact, two of acme-2024-ratio
    assert all((tmp_path / "site" / src).is_file() for src in shown_images)
    assert main(["report", str(run_dir), str(tmp_path / "paper"), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    by_charts = report.split("## Overall score by charts")[1].split("##")[0]
    assert f"| {LOCAL_MODEL} (vision=True) | {LOCAL_MODEL} (zero-shot cropped) |" in by_charts
    assert "| S | 100.0 (acc 100.0%, n=1) | 100.0 (acc 100.0%, n=1) |" in by_charts
    assert "| M | 100.0 (acc 100.0%, n=1) | 100.0 (acc 100.0%, n=1) |" in by_charts
    assert "| zh | 100.0 (acc 100.0%, n=1) |" in report.split("## Overall score by language")[1]
    side = report.split("## Protocols side by side on the 2 tasks every run has")[1]
    assert f"| {LOCAL_MODEL} (zero-shot cropped) | 100.0 (acc 100.0%, n=2) | 100.0 | 100.0 |" in side


def test_without_vision_the_same_agent_cannot_answer(findocmre_project: Path, tmp_path: Path, agent):
    arguments = ("--model", LOCAL_MODEL, "--api-base", agent.base_url, "--sandbox", "local", *TASKS)
    code, run_dir = run(findocmre_project, tmp_path, "blind", *arguments)
    rows = read_jsonl(run_dir / "results.jsonl")
    assert code == 0 and [row["verdict"] for row in rows] == ["no_answer", "no_answer"]
    events = read_jsonl(run_dir / "episodes" / "findocmre" / "acme-2024-ratio.jsonl")
    system = events[[event["event"] for event in events].index("model_call")]["messages"][0]["content"]
    assert "Your only tool is bash." in system and "view_image" not in system  # AGORA's prompt, unchanged
    assert yaml.safe_load((run_dir / "run.yaml").read_text())["protocol"]["prompts"] == load_prompts().digest
    assert agent.last_images == []

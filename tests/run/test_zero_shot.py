"""The paper's protocol (`--zero-shot full|cropped|bbox`) on the generated FinDocMRE set: no sandbox, the document
as images in one request, one reply, graded by each task's grader. The model on the other side answers by
measuring the pixels it receives (tests/helpers/findocmre_reader.py), so a right answer proves the right images
arrived, through each provider's fake and its own image rules."""

from __future__ import annotations

import dataclasses
import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

from harness.cli.main import main
from harness.core.images import check_image
from harness.inputs.limits import request_limits
from harness.records.jsonl import read_jsonl
from tests.helpers.findocmre_models import zero_shot_chat, zero_shot_turns
from tests.helpers.providers.anthropic_messages import AnthropicMessages
from tests.helpers.providers.chat_completions import ChatCompletionsProvider
from tests.helpers.providers.chat_rules import OPENAI, SGLANG
from tests.helpers.providers.gemini_generate import GeminiGenerateContent
from tests.helpers.providers.loopback import LoopbackProvider
from tests.helpers.providers.openai_responses import OpenAIResponses

LOCAL_MODEL = "hosted_vllm/qwen3-vl"


def run(project: Path, results: Path, run_id: str, *arguments: str) -> tuple[int, Path]:
    folders = ["--tasks-dir", str(project / "tasks"), "--collections-dir", str(project / "collections")]
    code = main(["--domain", "findocmre", *folders, "--results-dir", str(results), "--run-id", run_id, *arguments])
    return code, results / run_id


@pytest.fixture
def local_reader(monkeypatch) -> Iterator[ChatCompletionsProvider]:
    """An OpenAI-compatible local server (SGLang's rules) serving the image-reading model."""
    monkeypatch.setenv(SGLANG.key_variable, "loopback-key")
    fake = ChatCompletionsProvider(SGLANG)
    fake.respond = zero_shot_chat(fake)
    fake.start()
    yield fake
    fake.stop()


@pytest.mark.parametrize("mode", ["full", "cropped", "bbox"])
def test_the_papers_protocol_answers_every_type_from_the_pixels(
    findocmre_project: Path, tmp_path: Path, local_reader, score_judge_server, mode: str
):
    code, run_dir = run(
        findocmre_project,
        tmp_path,
        mode,
        *("--model", LOCAL_MODEL, "--api-base", local_reader.base_url, "--zero-shot", mode),
        *("--judge", "openai/judge", "--judge-api-base", score_judge_server.url),
    )
    rows = read_jsonl(run_dir / "results.jsonl")
    assert code == 0 and local_reader.broken == []
    assert {row["task_id"]: row["verdict"] for row in rows} == {row["task_id"]: "correct" for row in rows}
    assert len(rows) == 12 and {row["task_groups"]["charts"] for row in rows} == {"S", "M", "L"}
    record = yaml.safe_load((run_dir / "run.yaml").read_text())
    assert record["protocol"]["zero_shot"]["input"] == mode and record["protocol"]["zero_shot"]["page_dpi"] == 100
    limits = record["protocol"]["zero_shot"]["request_limits"]  # a local server's provider: none documented
    assert limits["provider"] == "strictest" and limits["note"].startswith("provider 'hosted_vllm' has no documented")
    assert record["sandbox"]["backend"] == "none" and "tools" not in local_reader.requests[0]
    episodes = run_dir / "episodes" / "findocmre"
    [shared] = [event for event in read_jsonl(episodes / "acme-2024-summary.jsonl") if event["event"] == "shared_call"]
    [call] = [event for event in read_jsonl(episodes / f"{shared['made_by']}.jsonl") if event["event"] == "model_call"]
    refs = [part["image"] for part in call["messages"][0]["content"] if part["type"] == "image"]
    assert record["protocol"]["zero_shot"]["page_filter"] == "figures"  # the profile's: the text-only cover is left out
    assert len(refs) == {"full": 3, "cropped": 3, "bbox": 3}[mode]  # a document's batch: its questions' charts
    assert all((run_dir / "images" / f"{ref['sha256']}.png").is_file() for ref in refs)
    assert "base64" not in (episodes / f"{shared['made_by']}.jsonl").read_text()
    if mode == "bbox":
        assert record["protocol"]["zero_shot"]["box_colour"] == "red"
    if mode == "cropped":  # each chart is the figure the PDF embeds, and the trajectory says so
        maker = read_jsonl(episodes / f"{shared['made_by']}.jsonl")
        [crops] = [event["crops"] for event in maker if event["event"] == "crop_sources"]
        assert [(crop["chart"], crop["source"]) for crop in crops] == [(f"fig{n}", "embedded") for n in (1, 2, 3)]


PROVIDERS = {
    "anthropic": (AnthropicMessages, "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", ""),
    "gemini": (GeminiGenerateContent, "gemini/gemini-2.5-flash", "GEMINI_API_KEY", "/v1beta"),
    "openai-responses": (OpenAIResponses, "openai/responses/gpt-5.5", "OPENAI_API_KEY", "/v1"),
}


@pytest.fixture(params=[*PROVIDERS, "openai-chat"])
def reader(request, monkeypatch) -> Iterator[tuple[Any, str, str]]:
    """(fake, --model, --api-base): each provider's fake serving the image-reading model."""
    if request.param == "openai-chat":
        monkeypatch.setenv(OPENAI.key_variable, "loopback-key")
        chat = ChatCompletionsProvider(OPENAI)
        chat.respond = zero_shot_chat(chat)
        chat.start()
        yield chat, "openai/gpt-4o", chat.base_url
        chat.stop()
        return
    kind, model, key, suffix = PROVIDERS[request.param]
    monkeypatch.setenv(key, "loopback-key")
    fake = kind(lambda turns: None)
    fake.script = zero_shot_turns(fake)
    with fake:
        yield fake, model, fake.api_base + suffix


def test_each_providers_fake_gets_the_pages_in_its_own_format(findocmre_project: Path, tmp_path: Path, reader):
    fake, model, api_base = reader
    chosen = ("--zero-shot", "full", "--task-id", "huaxia-2023-ratio", "--task-id", "acme-2024-above")
    code, run_dir = run(findocmre_project, tmp_path, "p", "--model", model, "--api-base", api_base, *chosen)
    rows = read_jsonl(run_dir / "results.jsonl")
    broken = fake.rule_breaks if isinstance(fake, LoopbackProvider) else fake.broken
    assert code == 0 and broken == [] and [row["verdict"] for row in rows] == ["correct", "correct"]
    assert len(fake.last_images) == 3 and all(
        image.media_type == "image/png" for image in fake.last_images
    )  # cover out
    recorded = yaml.safe_load((run_dir / "run.yaml").read_text())["protocol"]["zero_shot"]["request_limits"]
    assert recorded == request_limits(model.split("/")[0]).describe()  # the provider's own, with its page
    assert recorded["provider"] == model.split("/")[0] and recorded["source"].startswith("https://")


def test_a_zero_shot_run_warns_of_no_sandbox_library_and_replay_points_to_regrade(
    findocmre_project: Path, tmp_path: Path, local_reader, capsys, monkeypatch
):
    monkeypatch.setattr("harness.run.runner.missing_modules", lambda extra: ["pandas"])  # an install without them
    arguments = ("--model", LOCAL_MODEL, "--api-base", local_reader.base_url, "--zero-shot", "full")
    code, run_dir = run(findocmre_project, tmp_path, "z", *arguments, "--task-id", "acme-2024-above")
    assert code == 0 and "sandbox lacks" not in capsys.readouterr().out
    assert main(["replay", str(run_dir)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "nothing to re-execute; use `replay --regrade`" in line


def test_a_document_too_large_for_the_window_is_refused_before_any_call(
    findocmre_project: Path, tmp_path: Path, local_reader
):
    arguments = ("--model", LOCAL_MODEL, "--api-base", local_reader.base_url, "--zero-shot", "full")
    _code, run_dir = run(
        findocmre_project, tmp_path, "small", *arguments, "--context-window", "1500", "--task-id", "acme-2024-exact"
    )
    [row] = read_jsonl(run_dir / "results.jsonl")
    assert row["status"] == "context_limit" and "> window 1500" in row["detail"]
    assert local_reader.requests == []


def test_a_task_that_places_no_chart_is_refused_for_cropped_before_anything_is_written(
    findocmre_project: Path, tmp_path: Path, local_reader, capsys
):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    lines = (findocmre_project / "tasks" / "findocmre.jsonl").read_text(encoding="utf-8")
    (tasks / "findocmre.jsonl").write_text(lines.replace('"charts": [{', '"unplaced": [{', 1), encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "tasks").symlink_to(tasks)
    (project / "collections").symlink_to(findocmre_project / "collections")
    arguments = ("--model", LOCAL_MODEL, "--api-base", local_reader.base_url, "--zero-shot", "cropped")
    code, _ = run(project, tmp_path / "results", "r", *arguments, "--judge", "openai/judge")
    output = capsys.readouterr().err
    assert code == 2 and "--zero-shot cropped: task findocmre/acme-2024-exact: its metadata places no chart" in output
    assert not (tmp_path / "results").exists()


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(out, format="PNG")
    return out.getvalue()


def test_a_model_calling_no_provider_gets_the_strictest_request_limits():
    small, wide = check_image(_png(40, 30)), check_image(_png(2400, 10))
    limits = request_limits(None)
    assert limits.refusal([small] * 100) is None
    assert limits.refusal([small] * 101) == "101 images > the 100 one request may carry"
    assert "each may have at most 2000 px a side" in str(limits.refusal([wide] * 21))
    assert limits.refusal([wide] * 20) is None
    assert (
        dataclasses.replace(limits, request_bytes=1000).refusal([small] * 20)
        == "1,980 bytes of images > the 1,000 one request may carry"
    )


def test_each_provider_s_documented_request_limits_apply_and_any_other_gets_the_strictest():
    small, wide = check_image(_png(40, 30)), check_image(_png(2400, 10))
    openai, anthropic, gemini = (request_limits(name) for name in ("openai", "anthropic", "gemini"))
    assert openai.refusal([wide] * 101) is None and openai.refusal([small] * 501) is not None
    assert anthropic.refusal([small] * 101) == "101 images > the 100 one request may carry"
    assert "2000 px a side" in str(anthropic.refusal([wide] * 21)) and gemini.refusal([wide] * 21) is None
    assert openai.stored_refusal(10, 30 * 1024 * 1024) is None
    assert "one request may carry" in str(gemini.stored_refusal(10, 30 * 1024 * 1024))
    assert openai.image.max_bytes > anthropic.image.max_bytes == 3_932_160  # Anthropic's 5 MB of base64
    other = request_limits("deepseek")
    assert (other.provider, other.images_per_request, other.request_bytes) == ("strictest", 100, 14 * 1024 * 1024)
    assert (
        other.describe()["note"]
        == "provider 'deepseek' has no documented limits here: the strictest of anthropic, openai, gemini"
    )
    assert all(
        request_limits(name).describe()["source"].startswith("https://") for name in ("openai", "anthropic", "gemini")
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--vision",), "--zero-shot: the zero-shot protocol has no sandbox, so no --vision"),
        (("--closed-book",), "--zero-shot: the zero-shot protocol has no sandbox, so no --closed-book"),
        (("--executor", "ray"), "--zero-shot: not with --executor ray yet"),
    ],
)
def test_settings_that_need_a_sandbox_or_a_cluster_are_refused_in_one_line(
    findocmre_project: Path, tmp_path: Path, capsys, extra: tuple[str, ...], message: str
):
    code, _ = run(findocmre_project, tmp_path / "results", "r", "--model", "oracle", "--zero-shot", "full", *extra)
    output = capsys.readouterr().err
    assert code == 2 and message in output and len(output.strip().splitlines()) == 1
    assert not (tmp_path / "results").exists()


def test_pages_over_the_request_limits_are_refused_from_their_sizes_before_any_is_read(
    findocmre_project: Path, tmp_path: Path, local_reader
):
    """Issue 45: every page was read (and decoded) before the request's limits were checked: 850 MB in the runner
    before a `context_limit`. Here the three pages sent (the profile leaves out the text-only cover), 5 MB each
    (sparse files, never valid PNG): the limits are checked from their sizes on disk, so the refusal names the
    bytes, not a page that does not decode."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "tasks").symlink_to(findocmre_project / "tasks")
    shutil.copytree(findocmre_project / "collections", project / "collections", symlinks=True)
    pages = sorted((project / "collections").glob("*/*.images/page-*.png"))
    assert pages
    for page in pages:
        page.unlink()
        with page.open("wb") as handle:
            handle.truncate(5_000_000)
    arguments = ("--model", LOCAL_MODEL, "--api-base", local_reader.base_url, "--zero-shot", "full")
    _code, run_dir = run(project, tmp_path / "results", "big", *arguments, "--task-id", "acme-2024-exact")
    [row] = read_jsonl(run_dir / "results.jsonl")
    assert row["status"] == "context_limit", row["detail"]
    assert (
        row["detail"]
        == "the document does not fit one request: 15,000,000 bytes of images > the 14,680,064 one request may carry"
    )
    assert local_reader.requests == []

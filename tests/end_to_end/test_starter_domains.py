"""The eight starter domains built by scripts/build_domains.py: their promised shape, and the oracle (each
task's reference solution, run in the sandbox over the converted Markdown) gets every task right."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main

REPO = Path(__file__).resolve().parents[2]
DOMAINS = ["agri", "arch", "biz", "edu", "fin", "health", "law", "tech"]


def tasks_of(domain: str) -> list[dict]:
    return [json.loads(line) for line in (REPO / "tasks" / f"{domain}.jsonl").read_text().splitlines()]


def run_oracle(domain: str, results: Path, *extra: str) -> list[dict]:
    code = main(
        [
            "--model",
            "oracle",
            "--domain",
            domain,
            "--workers",
            "2",
            "--tasks-dir",
            str(REPO / "tasks"),
            "--collections-dir",
            str(REPO / "collections"),
            "--results-dir",
            str(results),
            "--run-id",
            "oracle",
            *extra,
        ]
    )
    assert code == 0
    return [json.loads(line) for line in (results / "oracle" / "results.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("domain", DOMAINS)
def test_oracle_answers_every_task_in_the_local_sandbox(domain: str, tmp_path: Path) -> None:
    rows = run_oracle(domain, tmp_path)
    run = yaml.safe_load((tmp_path / "oracle" / "run.yaml").read_text())
    manifest = json.loads((REPO / "collections" / f"{domain}.manifest.json").read_text())
    assert run["collections"][domain]["hash"] == manifest["hash"]  # the committed manifest is the collection's
    assert sorted(row["task_id"] for row in rows) == sorted(task["id"] for task in tasks_of(domain))
    assert [(r["task_id"], r["status"], r["answer"], r["detail"]) for r in rows if r["verdict"] != "correct"] == []
    assert {r["task_id"]: r["evidence_recall"] for r in rows} == {t["id"]: 1.0 for t in tasks_of(domain)}


@pytest.mark.parametrize("domain", ["law", "biz", "fin"])
def test_oracle_answers_every_task_in_docker(domain: str, tmp_path: Path, docker_image) -> None:
    _, image = docker_image
    rows = run_oracle(domain, tmp_path, "--sandbox", "docker", "--image", image)
    assert len(rows) == len(tasks_of(domain))
    assert [(r["task_id"], r["status"], r["answer"], r["detail"]) for r in rows if r["verdict"] != "correct"] == []
    assert {r["task_id"]: r["evidence_recall"] for r in rows} == {t["id"]: 1.0 for t in tasks_of(domain)}


@pytest.mark.parametrize("domain", DOMAINS)
def test_domain_has_the_promised_shape(domain: str) -> None:
    collection = REPO / "collections" / domain
    documents = sorted(collection.glob("*.md"))
    assert len(documents) >= 25
    assert sum(path.stat().st_size for path in documents) < 5_000_000
    assert len({path.name.split("_", 1)[0] for path in documents}) >= 2  # sources: <source>_<title>.md
    manifest = json.loads((REPO / "collections" / f"{domain}.manifest.json").read_text())
    formats = {entry["format"] for entry in manifest["documents"]}
    assert len(formats) >= 3, formats  # mixed raw formats
    tasks = tasks_of(domain)
    assert len(tasks) >= 6
    for task in tasks:
        assert len(task["evidence"]) >= 2 and task["solution"]
        assert all((collection / name).is_file() for name in task["evidence"]), task["id"]


def test_at_least_three_domains_have_documents_in_another_language() -> None:
    """The non-English tables print their figures with a decimal comma (`| 55,200 |`)."""
    decimal_comma = re.compile(r"\| -?\d+,\d+ \|")
    with_comma = [
        domain
        for domain in DOMAINS
        if any(decimal_comma.search(path.read_text()) for path in (REPO / "collections" / domain).glob("*.md"))
    ]
    assert len(with_comma) >= 3, with_comma

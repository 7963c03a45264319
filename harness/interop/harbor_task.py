"""One task of ours as a Harbor task folder (Harbor 0.26.0, `harbor.models.task.paths.TaskPaths`):

    task.toml                 # TaskConfig: metadata, agent and verifier timeouts (Harbor's network default)
    instruction.md            # our task prompt, and where the answer goes
    environment/Dockerfile    # FROM our sandbox image, the collection at /workspace/documents
    environment/documents/    # the task's collection
    tests/test.sh             # Harbor's verifier runs it after the agent: our grader, reward to /logs/verifier
    tests/grade.py, tests/gold.json, tests/grader/harness/...   # our deterministic graders' own code
    solution/solve.sh         # for Harbor's oracle agent: the task's solution command's output, else its gold

Harbor copies tests/ into the container only after the agent has run, and solution/ only for its oracle
agent, so the gold is nowhere the agent can read it before grading. The reward is 1 for a correct submission
(default mode), else 0; the grade itself goes to /logs/verifier/grade.json, which `import harbor` reads.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

from harness.core.names import reference_name
from harness.inputs.tasks import Task

ANSWER_FILE = "/workspace/answer.txt"
"""Where the agent leaves its final reply; the test grades it as our agent's last reply."""
GRADE_FILE = "grade.json"
"""The grade, beside Harbor's reward in /logs/verifier."""
_PACKAGE = Path(__file__).resolve().parent.parent
"""Our package's folder, whose graders the tests carry."""
_SOLUTION_COMMAND = "solution_command.sh"
"""The task's own solution command, which solve.sh runs from /workspace."""
_GRADER_PARTS = ("core", "grading")
"""Our package's folders the test carries: the deterministic graders and what they import (no pydantic)."""

_STOP = "STOPSIGNAL SIGKILL\n"
"""Harbor's container runs `sh -c "sleep infinity"`, which as the container's first process ignores SIGTERM: its
`docker compose down` would wait Docker's 10 s grace for each trial before killing it. Nothing in it is to be kept."""

_TEST_SH = """#!/bin/bash
# Grades /workspace/answer.txt with harness's own grader (tests/grader), writes Harbor's reward.
mkdir -p /logs/verifier
exec python3 /tests/grade.py
"""

_GRADE_PY = '''"""The agent's answer file graded by harness's own grader; the reward is 1 when correct, else 0."""

import dataclasses
import json
import sys
import traceback
from enum import Enum
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "grader"))
from harness.grading.deterministic import DETERMINISTIC_GRADERS  # noqa: E402
from harness.grading.gold import GoldSpec  # noqa: E402

task = json.loads((Path(__file__).parent / "gold.json").read_text(encoding="utf-8"))
answer = Path(task.pop("answer_file"))
grader = DETERMINISTIC_GRADERS[task.pop("grader")]
submission = answer.read_text(encoding="utf-8", errors="replace")[:100_000] if answer.is_file() else None
record = {"grader": grader.name, "grader_version": grader.version, "submission": submission}
try:
    grade = grader.grade(submission, GoldSpec(**task))
    record.update({k: v.value if isinstance(v, Enum) else v for k, v in dataclasses.asdict(grade).items()})
except Exception:
    verdict = "unparseable" if submission is not None else "no_answer"
    record.update(verdict=verdict, verdict_strict=verdict, verdict_lenient=verdict, reasons=["GRADER_ERROR"])
    record.update(grader_failure=traceback.format_exc()[-4000:])
correct = record["verdict"] == "correct"
Path("/logs/verifier/grade.json").write_text(json.dumps(record), encoding="utf-8")
Path("/logs/verifier/reward.txt").write_text("1" if correct else "0", encoding="utf-8")
'''


def task_folder_name(task: Task) -> str:
    """Harbor's task name for TASK: `<domain>__<id>`, each as `names.reference_name` gives it (kept as is when
    Docker takes it, else a readable part and a hash): any id names one folder of the dataset and nothing outside
    it, and Harbor's image and compose project names made from it are valid."""
    return f"{reference_name(task.domain)}__{reference_name(task.id)}"


def write_task(task: Task, collection: Path, image: str, timeout_s: float, folder: Path) -> None:
    """TASK as the Harbor task FOLDER: its collection copied into the environment built FROM IMAGE; TIMEOUT_S
    the agent's time limit."""
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(_task_toml(task, timeout_s), encoding="utf-8")
    (folder / "instruction.md").write_text(instruction(task), encoding="utf-8")
    environment = folder / "environment"
    shutil.copytree(collection, environment / "documents", symlinks=False)
    (environment / "Dockerfile").write_text(
        f"FROM {image}\nCOPY documents/ /workspace/documents/\nWORKDIR /workspace\n{_STOP}", encoding="utf-8"
    )
    tests = folder / "tests"
    tests.mkdir()
    _write_script(tests / "test.sh", _TEST_SH)
    (tests / "grade.py").write_text(_GRADE_PY, encoding="utf-8")
    gold = {
        "grader": task.grader,
        "answer": task.answer,
        "answer_format": task.answer_format,
        "rel_tol": task.rel_tol,
        "abs_tol": task.abs_tol,
        "answer_file": ANSWER_FILE,
    }
    (tests / "gold.json").write_text(json.dumps(gold, indent=2), encoding="utf-8")
    _copy_graders(tests / "grader" / "harness")
    solution = folder / "solution"
    solution.mkdir()
    if task.solution:
        _write_script(solution / _SOLUTION_COMMAND, f"#!/bin/bash\n{task.solution}\n")
    _write_script(solution / "solve.sh", _solve_sh(task))


def instruction(task: Task) -> str:
    """Our task prompt (the question, its answer format, the archive) and Harbor's answer channel: a file."""
    lines = [task.question.strip(), ""]
    if task.answer_format:
        lines += [f"Answer format: {task.answer_format}", ""]
    lines += [
        "The archive of documents to answer from is /workspace/documents (read it, do not change it).",
        "",
        f"When you are sure, write your final answer to {ANSWER_FILE} inside answer tags, in exactly the format",
        "the question asks for and nothing else inside the tags, for example `<answer>12.345%</answer>`.",
        "",
    ]
    return "\n".join(lines)


def _task_toml(task: Task, timeout_s: float) -> str:
    metadata = {"source": "harness", "domain": task.domain, "task_id": task.id, "grader": task.grader}
    lines = ['schema_version = "1.4"', "", "[metadata]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in metadata.items()]
    lines += ["", "[agent]", f"timeout_sec = {float(timeout_s)}", "", "[verifier]", "timeout_sec = 120.0"]
    return "\n".join([*lines, ""])


def _solve_sh(task: Task) -> str:
    """The oracle: the task's solution command's output as the answer, else the gold itself."""
    answer = f'"$(bash "$(dirname "$0")/{_SOLUTION_COMMAND}")"' if task.solution else shlex.quote(task.answer)
    return f"#!/bin/bash\ncd /workspace\nprintf '<answer>%s</answer>\\n' {answer} > {ANSWER_FILE}\n"


def _write_script(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)


def _copy_graders(target: Path) -> None:
    """Our package's graders and core as they are here (their version is the exporting harness's), with a
    package `__init__` of their own: the judged graders, and pydantic, stay out."""
    target.mkdir(parents=True)
    (target / "__init__.py").write_text('"""harness: its deterministic graders, for a Harbor task."""\n')
    for part in _GRADER_PARTS:
        (target / part).mkdir()
        for source in sorted((_PACKAGE / part).glob("*.py")):
            if source.name != "__init__.py":
                shutil.copyfile(source, target / part / source.name)
        (target / part / "__init__.py").write_text("")

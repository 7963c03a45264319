"""Makes tests/fixtures/harbor_job/ from a real Harbor job, with Harbor's own models (run it with a Python >= 3.12
that has `harbor` 0.26.0: `python scripts/harbor_job_fixture.py JOB_DIR OUT_DIR`).

JOB_DIR: `harbor run -p <export harbor of tasks/demo> -a oracle -e docker` as Harbor wrote it. OUT_DIR gets:
- `oracle/`: that job, its result.json files, config.json and each trial's verifier/ and agent/ (not its logs);
- `agent/`: a job of two trials of demo-001 written through Harbor's `TrialResult` and ATIF `Trajectory` models:
  an agent that reads a document with a bash tool and answers wrong (its trajectory, tokens and cost), and one
  that timed out (`AgentTimeoutError`).
"""

from __future__ import annotations

import json
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harbor.models.trajectories import Agent, FinalMetrics, Metrics, Observation, Step, ToolCall, Trajectory
from harbor.models.trajectories.observation_result import ObservationResult
from harbor.models.trial.result import AgentInfo, ExceptionInfo, ModelInfo, TimingInfo, TrialResult

TABLE = "statsmodels-macrodata_us-economy-quarterly-1970-1979.md"


def copy_job(job: Path, out: Path) -> None:
    out.mkdir(parents=True)
    for name in ("result.json", "config.json"):
        shutil.copyfile(job / name, out / name)
    for trial in sorted(path for path in job.iterdir() if (path / "result.json").is_file()):
        TrialResult.model_validate_json((trial / "result.json").read_text())
        shutil.copytree(trial / "verifier", out / trial.name / "verifier")
        shutil.copytree(trial / "agent", out / trial.name / "agent")
        shutil.copyfile(trial / "result.json", out / trial.name / "result.json")


def agent_trials(job: Path, out: Path) -> None:
    source = next(path for path in sorted(job.iterdir()) if path.name.startswith("demo__demo-001__"))
    base = TrialResult.model_validate_json((source / "result.json").read_text())
    start = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    agent = AgentInfo(name="terminus-2", version="2.0.0", model_info=ModelInfo(name="local-model", provider="openai"))
    answer = "<answer>38.000%</answer>"
    trajectory = Trajectory(
        schema_version="ATIF-v1.6",
        session_id="fixture",
        agent=Agent(name="terminus-2", version="2.0.0", model_name="openai/local-model"),
        steps=[
            Step(
                step_id=1, source="user", message="By what percentage did US real GDP grow between 1969 Q4 and 1979 Q4?"
            ),
            Step(
                step_id=2,
                source="agent",
                model_name="openai/local-model",
                message="I will read the 1970s table.",
                tool_calls=[
                    ToolCall(
                        tool_call_id="call_1",
                        function_name="bash",
                        arguments={"command": f"grep 1979 documents/{TABLE}"},
                    )
                ],
                observation=Observation(
                    results=[ObservationResult(source_call_id="call_1", content="| 1979 | Q4 | ...")]
                ),
                metrics=Metrics(prompt_tokens=1200, completion_tokens=40, cached_tokens=200, cost_usd=0.0031),
            ),
            Step(
                step_id=3,
                source="agent",
                model_name="openai/local-model",
                message=f"printf '{answer}' > /workspace/answer.txt",
                metrics=Metrics(prompt_tokens=1400, completion_tokens=30, cached_tokens=1200, cost_usd=0.0012),
            ),
        ],
        final_metrics=FinalMetrics(total_prompt_tokens=2600, total_completion_tokens=70, total_cost_usd=0.0043),
    )
    wrong = base.model_copy(
        update={
            "trial_name": "demo__demo-001__wrong01",
            "agent_info": agent,
            "agent_result": base.agent_result.model_copy(
                update={"n_input_tokens": 2600, "n_cache_tokens": 1400, "n_output_tokens": 70, "cost_usd": 0.0043}
            ),
            "verifier_result": base.verifier_result.model_copy(update={"rewards": {"reward": 0.0}}),
            "started_at": start,
            "environment_setup": TimingInfo(started_at=start, finished_at=start + timedelta(seconds=4)),
            "agent_execution": TimingInfo(
                started_at=start + timedelta(seconds=4), finished_at=start + timedelta(seconds=16.5)
            ),
        }
    )
    late = base.model_copy(
        update={
            "trial_name": "demo__demo-001__late002",
            "agent_info": agent,
            "verifier_result": None,
            "exception_info": ExceptionInfo(
                exception_type="AgentTimeoutError",
                exception_message="Agent execution timed out after 1800.0 seconds",
                exception_traceback="Traceback (most recent call last): ...",
                occurred_at=start + timedelta(hours=1),
            ),
            "started_at": start + timedelta(minutes=1),
        }
    )
    out.mkdir(parents=True)
    (out / "result.json").write_text((job / "result.json").read_text())
    for trial, grade in ((wrong, answer), (late, None)):
        folder = out / trial.trial_name
        (folder / "agent").mkdir(parents=True)
        (folder / "result.json").write_text(TrialResult.model_validate(trial.model_dump()).model_dump_json(indent=2))
        if grade is not None:
            (folder / "agent" / "trajectory.json").write_text(trajectory.model_dump_json(indent=2, exclude_none=True))
            (folder / "verifier").mkdir()
            (folder / "verifier" / "reward.txt").write_text("0")
            verdict = {"grader": "numeric", "submission": grade, "verdict": "wrong_value", "reasons": []}
            (folder / "verifier" / "grade.json").write_text(json.dumps(verdict))


if __name__ == "__main__":
    job, out = Path(sys.argv[1]), Path(sys.argv[2])
    copy_job(job, out / "oracle")
    agent_trials(job, out / "agent")

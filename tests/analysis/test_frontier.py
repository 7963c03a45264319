"""The cost–accuracy frontier on a sweep of two solvers × two models (real litellm over loopback HTTP), each point
and the frontier's members against a hand computation."""

from __future__ import annotations

import csv
import json

import pytest
import yaml

from harness.analysis.frontier import FrontierPoint, pareto_members
from harness.analysis.uncertainty import Estimate, clustered_mean, clustered_value_mean
from harness.cli.main import main
from tests.helpers.openai_server import Step, reply

pytestmark = pytest.mark.usefixtures("openai_key")

USAGE = {"cheap": (100, 10), "dear": (1000, 100)}
"""Model -> (prompt, completion) tokens of each of its calls."""
PRICES = {"openai/dear": {"input": 10, "output": 30}}
"""USD per million tokens; the cheap model has no price, so its runs are placed by tokens only."""


def respond(request: dict) -> Step:
    """The bash agent (offered tools) looks once, then answers; rag (no tools) answers at once. `dear` is always
    right; `cheap` only on Q1, and only after looking."""
    model = request["model"]
    prompt, completion = USAGE[model]
    text = json.dumps(request["messages"])
    looked = any(message.get("role") == "tool" for message in request["messages"])
    if request.get("tools") and not looked:
        return reply(bash="ls documents", prompt_tokens=prompt, completion_tokens=completion)
    right = model == "dear" or (looked and "Q1?" in text)
    return reply(f"<answer>{42 if right else 41}</answer>", prompt_tokens=prompt, completion_tokens=completion)


def _sweep(mini, server, solver: str) -> str:
    entries = [{"model": f"openai/{name}", "api_base": server.url, "label": f"{solver} {name}"} for name in USAGE]
    path = mini.root / f"sweep-{solver}.yaml"
    path.write_text(yaml.safe_dump(entries))
    prices = mini.root / "prices.yaml"
    prices.write_text(yaml.safe_dump(PRICES))
    outcome = mini.run("--sweep", str(path), "--solver", solver, "--prices", str(prices), run_id=solver)
    assert outcome.exit_code == 0, outcome.output
    return str(outcome.run_dir)


@pytest.mark.slow  # 15 s: five runs, the report's every figure
def test_frontier_of_two_solvers_by_two_models_equals_the_hand_computation(mini, openai_server):
    tasks = [
        {"id": f"t{i}", "domain": "mini", "question": f"Q{i}?", "answer": "42", "evidence": ["ledger.md"]}
        for i in (1, 2)
    ]
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    openai_server.respond = respond
    sweeps = [_sweep(mini, openai_server, solver) for solver in ("bash-agent", "rag")]
    scripted = mini.run("--model", mini.script(["<answer>42</answer>"]), "--label", "scripted", run_id="scripted")
    out = mini.root / "report"
    assert main(["report", *sweeps, str(scripted.run_dir), "--out", str(out)]) == 0
    found = {(row["axis"], row["label"]): row for row in csv.DictReader((out / "frontier.csv").open())}

    # by hand: the bash agent makes 2 calls an episode, rag 1; accuracy over tasks t1, t2
    tokens = {"bash-agent dear": 2 * 1100, "rag dear": 1100, "bash-agent cheap": 2 * 110, "rag cheap": 110}
    right = {"bash-agent dear": [1, 1], "rag dear": [1, 1], "bash-agent cheap": [1, 0], "rag cheap": [0, 0]}
    for label, count in tokens.items():
        row = found[("tokens", label)]
        assert float(row["per_task"]) == count and float(row["per_task_low"]) == float(row["per_task_high"]) == count
        expected = clustered_mean({task: [bool(value)] for task, value in enumerate(right[label])})
        assert float(row["accuracy"]) == pytest.approx(sum(right[label]) / 2)
        assert (float(row["accuracy_low"]), float(row["accuracy_high"])) == pytest.approx((expected.low, expected.high))
    on_tokens = {label for (axis, label), row in found.items() if axis == "tokens" and row["on_frontier"] == "True"}
    assert on_tokens == {"rag cheap", "bash-agent cheap", "rag dear"}  # the bash agent on dear: dearer, no better

    dear_call = (1000 * 10 + 100 * 30) / 1e6
    assert float(found[("cost", "rag dear")]["per_task"]) == pytest.approx(dear_call)
    assert float(found[("cost", "bash-agent dear")]["per_task"]) == pytest.approx(2 * dear_call)
    assert found[("cost", "rag dear")]["on_frontier"] == "True"
    assert found[("cost", "bash-agent dear")]["on_frontier"] == "False"
    for label in ("rag cheap", "bash-agent cheap", "scripted"):  # no price: not on the cost axis
        assert found[("cost", label)]["placed"] == "False"
    assert found[("tokens", "scripted")]["placed"] == "False"  # neither a price nor tokens
    assert found[("time", "scripted")]["placed"] == "True"
    assert found[("tokens", "rag dear")]["solver"] == "rag" and found[("tokens", "rag dear")]["model"] == "openai/dear"

    markdown = (out / "report.md").read_text()
    assert "## Cost–accuracy frontier" in markdown
    members = markdown.split("### By tokens per task")[1].split("###")[0]
    assert "| rag cheap | rag | openai/cheap | 0.0 [" in members and "| bash-agent dear |" not in members
    assert "Not placed (no tokens recorded (a scripted or replayed model)): `scripted`." in members
    for axis in ("cost", "tokens", "time"):
        assert (out / f"frontier_{axis}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / f"frontier_{axis}.pdf").exists()


def test_an_axis_that_places_fewer_than_two_runs_draws_no_figure(mini):
    """Two scripted runs: neither has a price or tokens, so only the time axis places them."""
    runs = [mini.run("--model", mini.script(["<answer>42</answer>"]), "--label", name, run_id=name) for name in "ab"]
    out = mini.root / "report"
    assert main(["report", *(str(run.run_dir) for run in runs), "--out", str(out)]) == 0
    assert sorted(path.name for path in out.glob("frontier_*")) == ["frontier_time.pdf", "frontier_time.png"]
    assert (
        "Not placed (no price for an episode's model calls (`--prices`)): `a`, `b`." in (out / "report.md").read_text()
    )


def _point(label: str, cost: float, accuracy: float) -> FrontierPoint:
    return FrontierPoint(label, Estimate(accuracy, accuracy, accuracy, 0.0, 1, 1), Estimate(cost, cost, cost, 0, 1, 1))


def test_pareto_members_by_hand_ties_included():
    points = [_point("a", 1, 0.2), _point("b", 2, 0.5), _point("c", 2, 0.4), _point("d", 3, 0.5), _point("e", 2, 0.5)]
    assert [point.label for point in pareto_members(points)] == ["a", "b", "e"]  # c and d: b is as cheap or cheaper


def test_a_measures_interval_is_clustered_by_task_and_never_below_zero():
    estimate = clustered_value_mean({"t1": [1.0, 3.0], "t2": [0.0]})
    assert estimate.mean == pytest.approx(4 / 3) and estimate.low == 0.0 and estimate.high > estimate.mean
    assert estimate.standard_error == pytest.approx(((4 - 8 / 3) ** 2 + (4 / 3) ** 2) ** 0.5 * 2**0.5 / 3)

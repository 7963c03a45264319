"""Default run ids: unique per start, plain names, a scripted model named by its file's stem."""

from __future__ import annotations

from unittest import mock

from harness.cli.main import main
from harness.core.names import check_run_id
from harness.inputs.config import RunConfig
from harness.run.planning.plan import default_run_id


def test_two_runs_started_in_the_same_second_get_two_ids():
    config = RunConfig(model="oracle", domain="law")
    with mock.patch("harness.run.planning.plan.datetime") as clock:  # one frozen second for both starts
        clock.now.return_value.strftime.return_value = "20261201T120000"
        first, second = default_run_id(config), default_run_id(config)
    assert first != second
    assert first.startswith("20261201T120000-") and second.startswith("20261201T120000-")
    check_run_id(first)
    check_run_id(second)


def test_a_scripted_runs_id_names_the_files_stem_not_its_path(tmp_path):
    script = tmp_path / "uxwork" / "law001.yaml"
    run_id = default_run_id(RunConfig(model=f"scripted:{script}", domain="law"))
    assert run_id.endswith("_scripted-law001_law")
    assert str(tmp_path.name) not in run_id
    check_run_id(run_id)


def test_two_shards_started_together_run_into_two_folders(mini):
    (mini.tasks_dir / "mini.jsonl").write_text(
        "".join(f'{{"id": "t{i}", "domain": "mini", "question": "Q?", "answer": "42"}}\n' for i in (1, 3))
    )
    folders = ["--tasks-dir", str(mini.tasks_dir), "--collections-dir", str(mini.root / "collections")]
    common = ["--model", mini.script(["<answer>42</answer>"]), "--domain", "mini", *folders]
    with mock.patch("harness.run.planning.plan.datetime") as clock:
        clock.now.return_value.strftime.return_value = "20261201T120000"
        clock.now.return_value.isoformat.return_value = "2026-12-01T12:00:00+00:00"
        codes = [main([*common, "--results-dir", str(mini.results_dir), "--shard", s]) for s in ("1/2", "2/2")]
    assert codes == [0, 0]
    assert len(list(mini.results_dir.iterdir())) == 2

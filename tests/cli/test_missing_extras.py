"""The core install runs the demo and any model; a command that needs an optional part of the install
(pyproject.toml's extras) that is missing says which one in one line, exit 2, nothing written. A module is made
missing the way Python marks a failed import: None in sys.modules."""

from __future__ import annotations

import shutil
import sys

import pytest
import tomllib

from harness.cli.main import main
from harness.core.extras import EXTRAS
from tests.conftest import REPO
from tests.helpers.openai_server import reply

RUN = REPO / "tests" / "fixtures" / "schema3_run"


def _error_line(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1, captured.err
    return captured.err.strip()


def test_every_extra_a_command_names_is_one_of_pyprojects_and_all_holds_them():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    assert extras["all"] == [f"harness[{','.join(EXTRAS)}]"]
    assert "harness[all]" in extras["test"]  # the tests run with every part installed


def test_collection_build_without_the_converters_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "markitdown", None)
    (tmp_path / "src" / "a").mkdir(parents=True)
    (tmp_path / "src" / "a" / "doc.md").write_text("# doc\n")
    out = tmp_path / "coll"
    assert main(["collection", "build", str(tmp_path / "src"), "--domain", "d", "--out", str(out)]) == 2
    assert _error_line(capsys) == "error: collection build needs: pip install 'harness[convert]' (missing: markitdown)"
    assert not out.exists()


def test_report_without_the_analysis_stack_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    run = shutil.copytree(RUN, tmp_path / "run")
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 2
    assert _error_line(capsys) == "error: report needs: pip install 'harness[analysis]' (missing: scipy)"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run"]


def test_the_e2b_sandbox_without_its_sdk_names_the_extra(mini, monkeypatch):
    monkeypatch.setitem(sys.modules, "e2b", None)
    outcome = mini.run("--model", "oracle", "--sandbox", "e2b")
    assert outcome.exit_code == 2 and not mini.results_dir.exists()
    assert outcome.output.strip() == "error: --sandbox e2b needs: pip install 'harness[e2b]' (missing: e2b)"


@pytest.mark.usefixtures("openai_key")
def test_a_models_run_in_the_local_sandbox_names_the_agents_missing_libraries(mini, openai_server, monkeypatch):
    for module in ("pandas", "pdfplumber"):
        monkeypatch.setitem(sys.modules, module, None)
    openai_server.push(reply("<answer>42</answer>"))
    outcome = mini.run("--model", "openai/test-model", "--api-base", openai_server.url)
    assert outcome.exit_code == 0
    [line] = [line for line in outcome.output.splitlines() if "toolset" in line]
    assert line == (
        "warning: the agent's python3 in the local sandbox lacks pandas, pdfplumber (the Docker image has them): "
        "pip install 'harness[toolset]'"
    )
    assert "toolset" not in mini.run("--model", "oracle", run_id="oracle").output  # no agent of a model there

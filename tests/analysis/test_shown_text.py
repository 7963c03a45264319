"""Text from input files reaches a person escaped: names imported from other tools' files are checked like
--label, report.md's cells cannot forge a row, and the console shows escape sequences, never sends them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.cli.main import main
from harness.core.safe_text import for_terminal, markdown_cell
from tests.interop.test_mini_swe_agent import import_args, minisweagent, run_mini_swe_agent, two_tasks  # noqa: F401

FORGED = "x\n| fake | row | 100.0% |"
ESCAPES = "model\x1b]0;pwned\x07\x1b[2J"


def test_for_terminal_shows_every_control_character_and_keeps_lines():
    assert for_terminal("a\x1b[6n\tb\nc\x9b\x07\x00\ud800") == "a\\x1b[6n\tb\nc\\x9b\\x07\\x00\\ud800"
    assert for_terminal("a\nb\tc\u2028", keep_newlines=False) == "a\\x0ab\\x09c\\u2028"


def test_for_terminal_shows_the_bidirectional_controls_that_reorder_text():
    """An override shows the text after it reversed, so a command reads as another; the marks right-to-left text
    uses (U+200F) stay."""
    assert (
        for_terminal("rm -rf \u202e/ ohce\u202c\u2066x\u2069\u200f")
        == "rm -rf \\u202e/ ohce\\u202c\\u2066x\\u2069\u200f"
    )
    assert markdown_cell("a\u202eb") == "a\\u202eb"


def test_a_markdown_cell_is_one_cell_on_one_line():
    assert markdown_cell(FORGED + "`code`") == "x\\x0a&#124; fake &#124; row &#124; 100.0% &#124;&#96;code&#96;"


@pytest.mark.parametrize("name", [FORGED, ESCAPES])
def test_an_imported_mini_swe_agent_model_name_is_checked_like_a_label(mini, minisweagent, name):  # noqa: F811
    two_tasks(mini)
    path = run_mini_swe_agent(mini, "t1", "Units in total?", ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo 42"], 3)
    data = json.loads(path.read_text())
    data["info"]["config"]["model"]["model_name"] = name
    path.write_text(json.dumps(data))
    assert main(import_args(mini, "forged", path)) == 2
    error = mini.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "\x1b" not in error, error
    assert f"{path}: field 'info.config.model.model_name':" in error and "is not a label" in error
    assert not (mini.results_dir / "forged").exists()


def test_an_imported_inspect_model_name_is_checked_like_a_label(mini):
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
    from inspect_ai.model import ModelOutput

    sample = EvalSample(
        id="t1", epoch=1, input="Q?", target="42", output=ModelOutput.from_content("openai/peer", "<answer>42</answer>")
    )
    spec = EvalSpec(
        created="2026-01-01T00:00:00+00:00",
        task="peer",
        dataset=EvalDataset(name="peer"),
        model=FORGED,
        config=EvalConfig(),
    )
    path = mini.root / "peer.eval"
    write_eval_log(EvalLog(status="success", eval=spec, samples=[sample]), str(path))
    code = main(
        [
            "import",
            "inspect",
            str(path),
            "--tasks-dir",
            str(mini.tasks_dir),
            "--results-dir",
            str(mini.results_dir),
            "--run-id",
            "forged",
        ]
    )
    error = mini.capsys.readouterr().err.strip()
    assert code == 2 and error.count("\n") == 0, error
    assert f"{path}: field 'eval.model':" in error and "is not a label" in error
    assert not (mini.results_dir / "forged").exists()


def test_a_hostile_label_in_a_run_record_forges_no_row_and_sends_no_escape(mini):
    """A run.yaml edited by hand (or written before imports were checked) still cannot forge the report."""
    assert mini.run("--model", "oracle").exit_code == 0
    record_path = mini.results_dir / "run" / "run.yaml"
    record = yaml.safe_load(record_path.read_text())
    record["label"] = FORGED + ESCAPES
    record_path.write_text(yaml.safe_dump(record))
    out = mini.root / "report"
    assert main(["report", str(mini.results_dir / "run"), "--out", str(out)]) == 0
    console = mini.capsys.readouterr().out
    markdown = (out / "report.md").read_text()
    assert not any(line.startswith("| fake |") for line in markdown.splitlines())
    assert "\x1b" not in markdown and "\x1b" not in console and "\x07" not in console
    assert "x\\x0a&#124; fake &#124; row &#124;" in markdown


def test_collection_build_shows_a_skipped_files_name_escaped(tmp_path, capsys):
    source = tmp_path / "raw"
    source.mkdir()
    (source / "notes.txt").write_text("hello\n")
    (source / "evil\x1b]0;pwned\x07\nskipped fake.pdf: fine.xyz").write_text("x")
    code = main(["collection", "build", str(source), "--domain", "d", "--out", str(tmp_path / "d"), "--workers", "1"])
    output = capsys.readouterr().out
    assert code == 1
    assert "\x1b" not in output and "\x07" not in output
    assert "evil\\x1b]0;pwned\\x07\\x0askipped fake.pdf: fine.xyz" in output.replace("\n", "")
    assert not any(line.startswith("skipped fake.pdf") for line in output.splitlines())


def test_names_of_a_label_refuse_c1_controls(tmp_path):
    from harness.core.errors import InputError
    from harness.core.names import check_label

    with pytest.raises(InputError, match="is not a label"):
        check_label("model\x9b2J", str(Path("x.yaml")))

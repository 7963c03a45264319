"""Careless or hostile input files: each is one line naming file, line and field, exit 2, nothing written."""

from __future__ import annotations

import json

import pytest

from tests.test_bad_input import GOOD, assert_rejected, write_tasks


def test_a_prompt_template_using_an_unknown_variable_is_refused_when_it_loads(mini):
    from harness.prompts import DEFAULT_PROMPTS

    custom = mini.root / "prompts.yaml"
    custom.write_text(DEFAULT_PROMPTS.read_text().replace("You are a careful research analyst.", "Hi {{ nmae }}."))
    assert_rejected(mini.run("--model", "oracle", "--prompts", str(custom)), "prompts.yaml", "field 'system'", "nmae")


@pytest.mark.parametrize("kind", ["config", "prompts", "script"])
def test_invalid_utf8_in_an_input_file_is_one_line_naming_its_line(mini, kind):
    path = mini.root / f"{kind}.yaml"
    path.write_bytes(b"# fine\n# fine too\nsystem: caf\xe9\n")
    flags = {"config": ["--model", "oracle", "--config", str(path)],
             "prompts": ["--model", "oracle", "--prompts", str(path)],
             "script": ["--model", f"scripted:{path}"]}[kind]  # fmt: skip
    assert_rejected(mini.run(*flags), f"{kind}.yaml:3:", "invalid UTF-8")

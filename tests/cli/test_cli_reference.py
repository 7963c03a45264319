"""The command-line reference (scripts/cli_reference.py, the docs site's generated page): every option of every
parser says what it is for, and the page lists every setting and every command."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from types import ModuleType

import pytest

from harness.cli.main import COMMANDS
from harness.inputs.config import flag_of, setting_fields

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(REPO / "scripts"))
        return importlib.import_module("cli_reference")


def _helpless(reference: ModuleType) -> list[str]:
    missing = []
    for words, parser in reference.command_parsers():
        for action in reference.documented_actions(parser):
            if not (action.help or "").strip():
                missing.append(f"python -m harness{words} {'/'.join(action.option_strings) or action.dest}")
        missing += [
            f"python -m harness{words} {name}"
            for name, text in reference.subcommand_helps(parser).items()
            if not text.strip()
        ]
    return missing


def test_every_option_of_every_parser_has_help(reference: ModuleType) -> None:
    assert _helpless(reference) == []


def test_an_option_without_help_is_found(reference: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--silent")
    monkeypatch.setattr(reference, "command_parsers", lambda: iter([(" probe", parser)]))
    assert _helpless(reference) == ["python -m harness probe --silent"]


def test_the_page_lists_every_setting_and_every_command(reference: ModuleType) -> None:
    page = reference.reference_page()
    for spec in setting_fields():
        assert f"`{spec.name}: " in page
        if spec.metadata["cli"]:
            assert f"`{flag_of(spec.name)}" in page
    for name in COMMANDS:
        assert f"## `python -m harness {name}`" in page
    assert "## `python -m harness sandbox build`" in page

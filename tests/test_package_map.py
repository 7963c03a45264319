"""The package map in docs/DESIGN.md is what scripts/package_map.py generates from the module docstrings: a new
module without a docstring, or a map not renewed after a module came, went or changed its docstring, fails."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def package_map() -> ModuleType:
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(REPO / "scripts"))
        return importlib.import_module("package_map")


def test_design_holds_the_generated_map(package_map: ModuleType) -> None:
    design = (REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    assert package_map.design_block(design) == package_map.package_map(), (
        "docs/DESIGN.md's package map is stale: run python scripts/package_map.py --write"
    )


def _tree(root: Path, modules: dict[str, str]) -> Path:
    for name, text in modules.items():
        path = root / "harness" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "harness"


def test_a_module_without_a_docstring_is_named(package_map: ModuleType, tmp_path: Path) -> None:
    tree = _tree(tmp_path, {"__init__.py": "", "part/__init__.py": '"""A part."""\n', "part/bare.py": "X = 1\n"})
    with pytest.raises(package_map.MissingDocstring, match=re.escape("harness/part/bare.py")):
        package_map.package_map(tree)


def test_a_new_module_changes_the_map(package_map: ModuleType, tmp_path: Path) -> None:
    modules = {"__init__.py": '"""Root."""\n', "part/__init__.py": '"""A part."""\n', "part/a.py": '"""Does a."""\n'}
    before = package_map.package_map(_tree(tmp_path, modules))
    (tmp_path / "harness" / "part" / "b.py").write_text('"""Does b. Then more."""\n')
    after = package_map.package_map(tmp_path / "harness")
    assert "| `part/b.py` | Does b |" in after
    assert after != before
    stale = package_map.with_block(f"x\n{package_map.BEGIN}\n{before}{package_map.END}\ny\n", before)
    assert package_map.design_block(stale) != after


@pytest.mark.parametrize(
    ("docstring", "sentence"),
    [
        ("Does a. Then b.", "Does a"),
        (
            "`python -m harness export FORMAT RUN...`: its flags. More.",
            "`python -m harness export FORMAT RUN...`: its flags",
        ),
        ("Items, e.g. tickers. More.", "Items, e.g. tickers"),
        ("One paragraph\nwrapped\n\nthen a list: a. b", "One paragraph wrapped"),
        ("Version 1.0 of it.", "Version 1.0 of it"),
    ],
)
def test_first_sentence(package_map: ModuleType, docstring: str, sentence: str) -> None:
    assert package_map.first_sentence(docstring) == sentence

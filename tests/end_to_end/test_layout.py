"""The package layout of docs/DESIGN.md: no module at the root of `harness/`, no import cycle, and the layer
rules (import-linter contracts in pyproject.toml) that fail the build when an import breaks one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[2]
PACKAGES = {
    "core",
    "inputs",
    "grading",
    "models",
    "sandboxes",
    "records",
    "diagnostics",
    "episode",
    "run",
    "analysis",
    "interop",
    "cli",
}


def test_the_root_of_harness_holds_only_the_packages_of_the_parts():
    root = REPO / "harness"
    assert sorted(p.name for p in root.glob("*.py")) == ["__init__.py", "__main__.py"]
    folders = {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == PACKAGES


def test_no_module_imports_itself_back_through_others():
    """Every import of the package, lazy ones included (grimp reads function bodies too), forms no cycle."""
    graph = grimp.build_graph("harness")
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if graph.chain_exists(imported, module):
                cycles.append(f"{module} -> {imported} -> ... -> {module}")
    assert cycles == []


def test_the_layer_contracts_hold_and_fail_on_a_forbidden_import(tmp_path: Path):
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "import-linter (the test extra) gives lint-imports"
    kept = subprocess.run([lint, "--no-cache"], cwd=REPO, capture_output=True, text=True)
    assert kept.returncode == 0, kept.stdout[-3000:]
    # a copy of the tree where grading imports a model: rule 1 must break
    copy = tmp_path / "tree"
    shutil.copytree(REPO / "harness", copy / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", copy / "pyproject.toml")
    grader = copy / "harness" / "grading" / "gold.py"
    grader.write_text(grader.read_text() + "\nfrom harness.models.base import ModelReply  # noqa\n")
    broken = subprocess.run(
        [lint, "--no-cache"],
        cwd=copy,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(copy)},
    )
    assert broken.returncode != 0
    assert "1b. grading imports only core BROKEN" in " ".join(broken.stdout.split())

"""A plain (non-editable) install carries the sandbox recipe, so Docker and E2B work from a wheel, and the
packaged judge protocols."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from harness.sandboxes.recipe import HIDDEN_COUNTERS, RECIPE_FILES, SYSCALL_RULES, recipe_hash
from tests.conftest import REPO

PROBE = """
import sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from harness.sandboxes import recipe
assert recipe.__file__.startswith(sys.argv[1]), recipe.__file__
context = Path(tempfile.mkdtemp())
recipe.write_build_context(context, None)
print(recipe.recipe_hash(), *sorted(p.name for p in context.iterdir()))
"""


def build_wheel(tmp_path: Path) -> Path:
    """The wheel `pip install .` would install, built from a copy of the sources (the tree stays clean)."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__")
    for name in ("harness", "sandbox_templates"):
        shutil.copytree(REPO / name, source / name, symlinks=True, ignore=ignore)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), "."],
        cwd=source,
        check=True,
        capture_output=True,
    )
    [wheel] = tmp_path.glob("harness-*.whl")
    return wheel


def test_installed_package_finds_the_recipe_and_hashes_it_like_the_source_tree(tmp_path):
    site = tmp_path / "site"
    with zipfile.ZipFile(build_wheel(tmp_path)) as wheel:
        wheel.extractall(site)
    # the benchmarks' own judge protocols, named by `--judge-prompt NAME` from an installed package
    for protocol in ("mudabench", "findocmre"):  # findocmre: the findocmre profile names it by its name
        assert (site / "harness" / "grading" / "protocols" / f"{protocol}.yaml").is_file()
    # the RAG baseline's coverage judges (MuDABench's two prompts), read at each RAG episode's end
    assert (site / "harness" / "grading" / "protocols" / "coverage" / "mudabench-rag.yaml").is_file()
    # the benchmark profiles (`--profile NAME`) and every file they name
    profiles = REPO / "harness" / "inputs" / "profiles"
    shipped = [path.relative_to(profiles) for path in profiles.rglob("*") if path.is_file() and path.suffix != ".pyc"]
    assert len(shipped) > 4 and all((site / "harness" / "inputs" / "profiles" / name).is_file() for name in shipped)
    assert (site / "harness" / "inputs" / "limits" / "providers.yaml").is_file()  # each provider's request limits
    probe = subprocess.run(
        [sys.executable, "-I", "-c", PROBE, str(site)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == [
        recipe_hash(),
        *sorted((*RECIPE_FILES, "extra-ca.crt", SYSCALL_RULES, HIDDEN_COUNTERS)),
    ]

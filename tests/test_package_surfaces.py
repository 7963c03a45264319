"""Each package's `__all__` names what it offers the others: exactly the modules, subpackages and names that the
code of another package imports from it (lazy imports and `module:attribute` strings included), and each
entry exists."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

_MODULE_ATTRIBUTE = re.compile(r"harness(\.\w+)+:\w+")


def _references(tree: ast.AST) -> set[str]:
    """The dotted names of harness a module's code reaches: what it imports, what attribute chains from an
    imported module name, and `module:attribute` strings."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute):
            parts = [node.attr]
            inner: ast.expr = node.value
            while isinstance(inner, ast.Attribute):
                parts.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name):
                found.add(".".join([inner.id, *reversed(parts)]))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE_ATTRIBUTE.fullmatch(node.value):
            found.add(node.value.replace(":", "."))
    return {name for name in found if name == "harness" or name.startswith("harness.")}


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: Path, root: Path) -> str:
    return _module_name(path.parent / "__init__.py", root)


def offered(root: Path) -> dict[str, set[str]]:
    """Each package under ROOT (a folder with `__init__.py`) -> the children (modules, subpackages, names of its
    `__init__`) that modules of other packages reach."""
    files = [path for path in root.rglob("*.py") if "__pycache__" not in path.parts]
    packages = {_package_of(path, root) for path in files if path.name == "__init__.py"}
    surfaces: dict[str, set[str]] = {package: set() for package in packages}
    for path in files:
        importer = _package_of(path, root)
        for reference in _references(ast.parse(path.read_text(encoding="utf-8"))):
            for package in packages:
                if package == importer or not reference.startswith(package + "."):
                    continue
                child = reference.removeprefix(package + ".").split(".")[0]
                if not f"{importer}.".startswith(f"{package}.{child}."):  # a subpackage's use of its own modules
                    surfaces[package].add(child)
    return surfaces


def _declared(init: Path) -> list[str] | None:
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


SURFACES = offered(REPO / "harness")
PACKAGES = sorted(SURFACES)


@pytest.mark.parametrize("package", PACKAGES)
def test_all_names_exactly_what_the_other_packages_use(package: str) -> None:
    init = REPO / Path(*package.split(".")) / "__init__.py"
    declared = _declared(init)
    assert declared is not None, f"{init} has no __all__"
    assert sorted(declared) == sorted(SURFACES[package])


@pytest.mark.parametrize("package", PACKAGES)
def test_every_entry_of_all_exists(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert hasattr(module, name) or importlib.util.find_spec(f"{package}.{name}") is not None, name


def test_a_new_use_from_another_package_is_found(tmp_path: Path) -> None:
    root = tmp_path / "harness"
    for package in ("", "low", "high"):
        (root / package).mkdir(parents=True, exist_ok=True)
        (root / package / "__init__.py").write_text('"""A package."""\n')
    (root / "low" / "kept.py").write_text("from harness.low import inner\n")
    (root / "low" / "inner.py").write_text("VALUE = 1\n")
    (root / "low" / "hidden.py").write_text("SECRET = 2\n")
    (root / "high" / "user.py").write_text(
        "import harness\nfrom harness.low.kept import x\n\ndef lazy():\n    import harness.low.inner\n"
        "    return harness.__version__, 'harness.low.hidden:SECRET'\n"
    )
    assert offered(root) == {
        "harness": {"__version__", "low"},
        "harness.low": {"kept", "inner", "hidden"},
        "harness.high": set(),
    }

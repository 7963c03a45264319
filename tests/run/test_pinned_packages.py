"""The translation layer pinned: pyproject.toml's exact pins, the constraints.txt lock and run.yaml's record of
the versions a run resolved say the same thing."""

from __future__ import annotations

import importlib.util
from importlib import metadata

import tomllib
import yaml
from packaging.utils import canonicalize_name

from harness.run.planning.pinned_packages import PINNED_PACKAGES
from tests.conftest import REPO

_spec = importlib.util.spec_from_file_location("write_constraints", REPO / "scripts" / "write_constraints.py")
assert _spec is not None and _spec.loader is not None
write_constraints = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(write_constraints)

PYPROJECT = (REPO / "pyproject.toml").read_text()
CONSTRAINTS = (REPO / "constraints.txt").read_text()


def test_pyproject_pins_and_the_constraints_file_agree():
    assert write_constraints.disagreements(PYPROJECT, CONSTRAINTS) == []


def test_a_lock_at_another_litellm_release_disagrees_with_the_pin():
    pinned = write_constraints.exact_pins(tomllib.loads(PYPROJECT)["project"]["dependencies"])["litellm"]
    moved = CONSTRAINTS.replace(f"litellm=={pinned}\n", "litellm==1.50.0\n")
    assert moved != CONSTRAINTS
    assert write_constraints.disagreements(PYPROJECT, moved) == [
        f"litellm: pyproject.toml pins {pinned}, constraints.txt has 1.50.0"
    ]


def test_a_lock_without_a_runtime_pin_disagrees_with_it():
    pinned = write_constraints.exact_pins(tomllib.loads(PYPROJECT)["project"]["dependencies"])["openai"]
    missing = CONSTRAINTS.replace(f"openai=={pinned}\n", "")
    assert write_constraints.disagreements(PYPROJECT, missing) == [
        f"openai: pyproject.toml pins {pinned}, constraints.txt has nothing"
    ]


def test_every_package_that_shapes_a_request_is_pinned_exactly_and_only_those_are():
    runtime_pins = write_constraints.exact_pins(tomllib.loads(PYPROJECT)["project"]["dependencies"])
    assert set(runtime_pins) == {canonicalize_name(name) for name in PINNED_PACKAGES}


def test_run_yaml_records_the_resolved_versions_of_the_pinned_packages(mini):
    outcome = mini.run("--model", "oracle")
    assert outcome.exit_code == 0, outcome.output
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())
    assert record["packages"] == {name: metadata.version(name) for name in PINNED_PACKAGES}
    pins = write_constraints.exact_pins(tomllib.loads(PYPROJECT)["project"]["dependencies"])
    assert record["packages"]["litellm"] == pins["litellm"]

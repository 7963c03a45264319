"""Benchmark profiles as data (harness/inputs/profiles): FinDocMRE's paper's defaults, a flag's model argument
joining the profile's, and a bad page resolution refused in one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.core.errors import InputError
from harness.inputs.config_sources import build_config
from harness.inputs.profiles import apply_profile, load_profile


def _config(**flags):
    return build_config({}, {"model": "oracle", "domain": "findocmre", **flags})


def test_the_findocmre_profile_holds_the_papers_decoding_and_resolution():
    profile = load_profile("findocmre")
    applied, overrides = apply_profile(_config(), profile, frozenset())
    assert (applied.temperature, applied.model_args, overrides) == (0.0, ["seed=1234"], [])
    assert profile.page_images == 110  # Appendix C.3
    assert profile.solvers["zero-shot"]["questions"] == "document"
    assert profile.solvers["zero-shot"]["page_filter"] == "figures"
    assert Path(profile.solvers["zero-shot"]["prompt"]).name == "standard.txt"


def test_a_flags_model_argument_joins_the_profiles_and_wins_on_its_own_key():
    profile = load_profile("findocmre")
    given = _config(model_args=["top_p=0.5"])
    applied, overrides = apply_profile(given, profile, given.given)
    assert applied.model_args == ["seed=1234", "top_p=0.5"] and overrides == []
    seeded = _config(model_args=["seed=7", "top_p=0.5"])
    applied, overrides = apply_profile(seeded, profile, seeded.given)
    assert applied.model_args == ["seed=7", "top_p=0.5"] and overrides == ["model_args"]


def test_a_page_resolution_out_of_range_is_one_line(tmp_path: Path):
    profile = tmp_path / "mine.yaml"
    profile.write_text('profile: mine\nversion: "1"\nbenchmark: FinDocMRE\npage_images: 0\n')
    with pytest.raises(InputError, match=rf"^{re.escape(str(profile))}:4: field 'page_images': 0 is not a resolution"):
        load_profile(str(profile))

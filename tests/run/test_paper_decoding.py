"""The FinDocMRE profile's decoding (temperature 0, seed 1234; its paper's Appendix B.1.1) where a model's API does
not take it: a default of the profile's that the model declines is not sent (the provider's own instead, as the
paper's "default inference parameters"), said and recorded; what the user gave is sent as given."""

from __future__ import annotations

from harness.inputs.config_sources import build_config
from harness.inputs.profiles import apply_profile, load_profile
from harness.models.litellm_model import not_taken
from harness.run.planning.model_factory import model_factory


def _profiled(**flags):
    config = build_config({}, {"domain": "findocmre", **flags})
    return apply_profile(config, load_profile("findocmre"), config.given)[0]


def test_litellms_own_mapping_says_which_parameters_a_model_declines():
    names = ("temperature", "seed")
    assert not_taken("openai/gpt-5", 0.0, {"seed": 1234}, names) == ["temperature"]  # only 1 while reasoning
    assert not_taken("anthropic/claude-sonnet-4-5", 0.0, {"seed": 1234}, names) == ["seed"]
    assert not_taken("anthropic/claude-sonnet-4-5", 0.0, {"reasoning_effort": "high"}, names) == ["temperature", "seed"]
    assert not_taken("openai/gpt-4o", 0.0, {"seed": 1234}, names) == []


def test_the_profiles_defaults_a_model_declines_are_not_sent(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    gpt5 = model_factory(_profiled(model="openai/gpt-5"), [])
    assert gpt5.settings["temperature"] is None and gpt5.settings["args"] == {"seed": 1234}
    assert gpt5.settings["not_sent"] == {"temperature": 0.0}
    assert any("openai/gpt-5 is sent no temperature=0.0" in note for note in gpt5.notes)
    claude = model_factory(_profiled(model="anthropic/claude-sonnet-4-5"), [])
    assert claude.settings["temperature"] == 0.0 and claude.settings["args"] == {}
    assert claude.settings["not_sent"] == {"seed": 1234}
    gpt4o = model_factory(_profiled(model="openai/gpt-4o"), [])
    assert gpt4o.settings["temperature"] == 0.0 and gpt4o.settings["args"] == {"seed": 1234}
    assert "not_sent" not in gpt4o.settings


def test_what_the_user_gave_is_sent_as_given(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    given = model_factory(_profiled(model="anthropic/claude-sonnet-4-5", temperature=0.0, model_args=["seed=7"]), [])
    assert given.settings["temperature"] == 0.0 and given.settings["args"] == {"seed": 7}
    assert "not_sent" not in given.settings

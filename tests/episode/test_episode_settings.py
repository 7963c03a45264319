"""An episode is handed the settings it reads (budgets, loop rules), built once from the run's configuration."""

from __future__ import annotations

import typing

from harness.episode import EpisodeContext
from harness.episode.settings import EpisodeSettings
from harness.episode.solvers import BashAgent, LoopSettings
from harness.inputs.config import RunConfig


def test_an_episode_is_handed_its_own_settings_not_the_run_configuration():
    hints = typing.get_type_hints(EpisodeContext)
    assert RunConfig not in hints.values()
    assert hints["settings"] is EpisodeSettings


def test_episode_settings_carry_the_budgets_and_the_loop_rules_of_the_run():
    config = RunConfig(
        model="oracle",
        max_turns=7,
        time_limit=9.0,
        context_window=1000,
        output_reserve=10,
        action_format="text",
        command_timeout=3.0,
        max_format_errors=2,
    )
    expected = EpisodeSettings("oracle", 7, 9.0, 1000, 10, LoopSettings("text", 3.0, 2))
    assert EpisodeSettings.of(config, 10, BashAgent({})) == expected

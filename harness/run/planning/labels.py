"""A run's label: its name in report tables, where runs of one label are merged (shards of one protocol)."""

from __future__ import annotations

from harness.analysis.runs import CLOSED_BOOK_SUFFIX
from harness.inputs.config import DEFAULT_OUTPUT_RESERVE, RunConfig

_LABELLED_SETTINGS = (
    "temperature",
    "action_format",
    "max_turns",
    "time_limit",
    "max_episode_cost",
    "command_timeout",
    "context_window",
    "max_output_tokens",
    "output_reserve",
    "max_format_errors",
    "prompts",
    "vision",
)
"""Protocol settings that name a run apart when they differ from the defaults (with the model arguments given):
planning/plan.py's protocol keys and the reply cap of the model's settings."""


def label_of(config: RunConfig) -> str:
    """`--label`, by default `_default_label`."""
    return config.label or _default_label(config)


def _default_label(config: RunConfig) -> str:
    """The model as given (an alias stays an alias), plus each `--model-arg`, each protocol setting that differs
    from its default (the profile's, else the runner's) and a solver other than the default with its arguments:
    two runs of one model under different protocols or solvers get different labels, and a run of a profile's own
    settings none."""
    defaults, profiled = RunConfig(), config.profiled
    parts = [item for item in config.model_args if item not in profiled.get("model_args", [])]
    for name in _LABELLED_SETTINGS:
        value = getattr(config, name)
        default = profiled.get(name, getattr(defaults, name))
        if value != default and not (name == "output_reserve" and value == DEFAULT_OUTPUT_RESERVE):
            parts.append(f"{name}={value}")  # 4096, the reserve's default before it followed the reply cap: none
    if config.solver != profiled.get("solver", defaults.solver) and not config.zero_shot:
        # zero-shot runs say so in their suffix (analysis/runs.py); another solver names itself and its arguments
        parts += [
            f"solver={config.solver}",
            *(a for a in config.solver_args if a not in profiled.get("solver_args", [])),
        ]
    label = f"{config.model} ({', '.join(parts)})" if parts else config.model
    return label + CLOSED_BOOK_SUFFIX if config.closed_book else label

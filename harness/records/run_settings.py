"""run.yaml's typed sections beside the run's own (run_record.py): the protocol a score means, the model's resolved
settings and its price. Each is written back as it was given (`AsGiven`): a run.yaml an older harness wrote keeps
its keys and their order when a resume writes it again, and a key this harness no longer writes is kept as given.
"""

from __future__ import annotations

from pydantic import ConfigDict, JsonValue

from harness.core.record import AsGiven, Number


class _AsWritten(AsGiven):
    model_config = ConfigDict(extra="allow")
    """Keys an older (or newer) harness wrote that this one does not declare are kept as given."""


class ModelSettings(_AsWritten):
    """The model's resolved settings (`model` in run.yaml, `model_settings` in its protocol)."""

    model: str | None = None
    temperature: Number | None = None
    args: dict[str, JsonValue] | None = None
    """`--model-arg KEY=VALUE`, as the provider is sent them."""
    context_window: int | None = None
    max_output_tokens: int | None = None


class JudgeSettings(_AsWritten):
    """The judge panel as the protocol records it (grading/judge.py `JudgePanel.describe`)."""

    models: list[str] | None = None
    quorum: int | None = None
    prompt: str | None = None
    """The judge prompt's digest."""
    params: dict[str, JsonValue] | None = None
    judge_prompt: dict[str, JsonValue] | None = None
    """A given judge protocol's digest and reading rules (left out for ours)."""
    score_prompt: dict[str, JsonValue] | None = None


class VisionSettings(_AsWritten):
    """The image tool's limits (`--vision`, episode/vision.py `VisionLimits.describe`)."""

    tool: str | None = None
    formats: str | None = None
    max_image_bytes: int | None = None
    max_image_side: int | None = None
    max_image_pixels: int | None = None
    images_per_turn: int | None = None
    images_per_episode: int | None = None
    image_bytes_per_episode: int | None = None


class RunProtocol(_AsWritten):
    """The settings that change what a score means (run/runner.py `protocol_of`): a resume under other ones is
    refused. A solver other than the bash agent adds its own section under its name (kept as given)."""

    model: str | None = None
    max_turns: int | None = None
    time_limit: Number | None = None
    command_timeout: Number | None = None
    context_window: int | None = None
    output_reserve: int | None = None
    action_format: str | None = None
    max_format_errors: int | None = None
    temperature: Number | None = None
    model_args: list[str] | None = None
    graders: dict[str, str] | None = None
    """Grader name -> its version."""
    prompts: str | None = None
    """The prompt set's digest."""
    model_digest: str | None = None
    """A scripted model's replies' digest."""
    model_settings: ModelSettings | None = None
    closed_book: bool | None = None
    vision: VisionSettings | None = None
    judge: JudgeSettings | None = None


class Rates(AsGiven):
    """USD per million tokens (models/prices.py)."""

    input: Number
    output: Number
    cache_read: Number
    cache_write: Number


class LongContextRates(Rates):
    above: int
    """The prompt size (tokens) above which these rates apply to the whole call."""


class Prices(AsGiven):
    """The price the run's costs were computed with, and where it came from (the `--prices` file, or litellm)."""

    source: str
    input: Number
    output: Number
    cache_read: Number
    cache_write: Number
    long_context: LongContextRates | None = None

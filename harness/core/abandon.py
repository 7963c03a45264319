"""A blocking call that a run's Ctrl-C can walk away from: a provider call (litellm's is synchronous and may
wait for minutes on a server that never answers) runs in a daemon thread while the caller watches the run's
cancel flag, so the episode ends at once instead of when the provider gives up."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

POLL_S = 0.1
"""How often the waiting side looks at the cancel flag."""


class StoppedWithoutWaiting(KeyboardInterrupt):
    """A second Ctrl-C: the command stops without waiting for its running episodes' rows."""


def stopping_note(running: int) -> str:
    """What the first Ctrl-C waits for, and how not to."""
    return (
        f"interrupted: ending {running} running episodes as cancelled (their model calls abandoned, their "
        "sandboxes closed) and writing their rows; Ctrl-C again to stop without waiting"
    )


class CallAbandoned(Exception):
    """The run was cancelled while the call was in flight: its result, if it ever comes, is thrown away."""


def call_abandonable(call: Callable[[], T], cancel: threading.Event, abandon: Callable[[], None] | None = None) -> T:
    """`call()`'s result or exception; `CallAbandoned` as soon as `cancel` is set while it runs, after
    `abandon()` (which closes the call's connections where the caller can). The call keeps this thread's
    context variables (a Ray node's provider gates are one)."""
    done = threading.Event()
    values: list[T] = []
    errors: list[BaseException] = []
    context = contextvars.copy_context()

    def run() -> None:
        try:
            values.append(context.run(call))
        except BaseException as error:  # handed to the waiting side, which raises it
            errors.append(error)
        finally:
            done.set()

    threading.Thread(target=run, name="abandonable-call", daemon=True).start()
    while not done.wait(POLL_S):
        if cancel.is_set():
            if abandon is not None:
                abandon()
            raise CallAbandoned("the run was interrupted while the call was in flight")
    if errors:
        raise errors[0]
    return values[0]

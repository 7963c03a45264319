"""The longest command a sandbox can run: every backend hands it to bash as one argument (`bash -c COMMAND`)."""

from __future__ import annotations

from harness.sandboxes.base import ExecResult

MAX_COMMAND_BYTES = 32 * 4096 - 1
"""Linux's MAX_ARG_STRLEN (32 pages) less the argument's terminating NUL: execve refuses a longer argument
(E2BIG), so a longer command fails in the launcher or the image's exec server, each in its own way."""
_TOO_LONG_EXIT_CODE = 126
"""What bash gives a command it cannot execute (an argument list too long included)."""


def too_long(command: str) -> ExecResult | None:
    """The result a command over the limit gets instead of running, the same on every backend; None if it fits."""
    size = len(command.encode("utf-8", errors="surrogatepass"))
    if size <= MAX_COMMAND_BYTES:
        return None
    stderr = (
        f"harness: the command is {size:,} bytes, over the limit of {MAX_COMMAND_BYTES:,} bytes for one command "
        "(Linux's longest single argument); it did not run. Write long content in several commands.\n"
    )
    return ExecResult(
        stdout="",
        stderr=stderr,
        exit_code=_TOO_LONG_EXIT_CODE,
        timed_out=False,
        truncated=False,
        raw_bytes=len(stderr),
        duration_s=0.0,
    )

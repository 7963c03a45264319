"""A file's bytes out of a sandbox, read by a command inside it (the agent's own view, its own limits), bounded.

The file is read where the agent sees it: a link resolves inside the sandbox, never on the host, so the agent
can hand out only what it can read itself. The path goes to the command as an argument (never into the script's
text); only a regular file is read, of at most `max_bytes` (the size is checked before, and `head` stops one
byte after, for a file that grows), and it comes back base64-encoded on stdout, through the backend's usual
bounded output capture with room for exactly that much. What is wrong with the file is the agent's
(`FileUnreadable`, one line); a sandbox that fails is a `SandboxError`, as for any command.
"""

from __future__ import annotations

import base64
import binascii
import shlex

from harness.sandboxes.base import ExecResult

_SCRIPT = (
    'f=$1; max=$2; [ -e "$f" ] || { echo "no such file" >&2; exit 3; }; '
    '[ -f "$f" ] || { echo "not a regular file" >&2; exit 3; }; '
    '[ -r "$f" ] || { echo "not readable" >&2; exit 3; }; '
    'size=$(stat -L -c %s -- "$f") || exit 3; '
    '[ "$size" -le "$max" ] || { echo "the file is $size bytes" >&2; exit 4; }; '
    'head -c $((max + 1)) -- "$f" | base64 -w0'
)
_TOO_LARGE = 4


class FileUnreadable(ValueError):
    """The path names no regular file the sandbox can read, or one over the size allowed: the agent's error."""


def read_command(path: str, max_bytes: int) -> str:
    """The bash command that prints PATH base64-encoded, or says on stderr why not (exit 3, or 4: too large)."""
    return f"bash -c {shlex.quote(_SCRIPT)} _ {shlex.quote(path)} {max_bytes}"


def output_room(max_bytes: int) -> int:
    """The stdout the command may print: the base64 of one byte over the limit, and a margin."""
    return 4 * ((max_bytes + 1 + 2) // 3) + 4096


def file_bytes(result: ExecResult, path: str, max_bytes: int) -> bytes:
    """The bytes the read printed; `FileUnreadable` naming PATH with what went wrong."""
    if result.timed_out:
        raise FileUnreadable(f"{path}: reading the file took too long")
    if result.exit_code != 0:
        problem = result.stderr.strip().splitlines()[-1:] or [f"exit status {result.exit_code}"]
        if result.exit_code == _TOO_LARGE:
            raise FileUnreadable(f"{path}: {problem[0]}, over the limit of {max_bytes:,} bytes per image")
        raise FileUnreadable(f"{path}: {problem[0][:200]}")
    if result.truncated:
        raise FileUnreadable(f"{path}: the file is over the limit of {max_bytes:,} bytes per image")
    try:
        data = base64.b64decode(result.stdout.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise FileUnreadable(f"{path}: the file changed while it was read") from None
    if len(data) > max_bytes:
        raise FileUnreadable(f"{path}: the file grew over the limit of {max_bytes:,} bytes per image while read")
    return data

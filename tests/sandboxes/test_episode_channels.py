"""Two episodes running at once share nothing they can signal through (issue 37, class 1 and 3; issue 45,
classes 1 and 12: tests/sandboxes/test_kernel_counters.py has the kernel counters' own).

Each test is the attack as a hostile agent ran it: a sender episode and a receiver episode at the same time
over the same collection, on every local privilege path, on Docker and on our E2B code (the emulator). The
commands are Python run inside the sandbox, calling the kernel directly (ctypes), as an agent may.
"""

from __future__ import annotations

import errno
import json
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from harness.sandboxes.base import Sandbox, SandboxSettings
from tests.helpers.kernel_counters import SENDER as COUNTER_SENDER

CHANNEL_BACKENDS = ["local", "local-rlimit", "local-setpriv", "local-caller", "docker", "e2b-emulator"]
"""E2B runs a VM per episode, so it shares nothing with another episode; its commands get the same rules all
the same (harness-seccomp), so that an agent meets one sandbox whatever the backend."""

_SYSCALLS = """
import ctypes, errno, json, os, platform, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": dict(socket=41, socketpair=53, flock=73, fcntl=72, inotify_init1=294, inotify_add_watch=254,
                     cachestat=451, preadv2=327),
      "aarch64": dict(socket=198, socketpair=199, flock=32, fcntl=25, inotify_init1=26, inotify_add_watch=27,
                      cachestat=451, preadv2=286)}[platform.machine()]
def call(name, *args):
    result = libc.syscall(NR[name], *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return result if result >= 0 else -ctypes.get_errno()
def lock(fd, command, offset):
    request = ctypes.create_string_buffer(struct.pack("hhqqi4x", 0, 0, offset, 1, 0))  # F_RDLCK: a read-only file
    return call("fcntl", fd, command, request)
"""

SENDER = (
    _SYSCALLS
    + """
fd = os.open(sys.argv[1], os.O_RDONLY)
answer = int(sys.argv[2])
results = {"flock": call("flock", fd, 2 | 4)}  # LOCK_EX | LOCK_NB (allowed on a read-only file)
results["F_SETLK"] = [lock(fd, 6, bit) for bit in range(8) if answer >> bit & 1]
ofd = os.open(sys.argv[1], os.O_RDONLY)
results["F_OFD_SETLK"] = [lock(ofd, 37, 100 + bit) for bit in range(8) if answer >> bit & 1]
print(json.dumps(results), flush=True)
time.sleep(float(sys.argv[3]))
"""
)

RECEIVER = (
    _SYSCALLS
    + """
fd = os.open(sys.argv[1], os.O_RDONLY)
bits, seen = [], []
for offset in range(8):
    request = ctypes.create_string_buffer(struct.pack("hhqqi4x", 1, 0, offset, 1, 0))  # would F_WRLCK conflict?
    code = call("fcntl", fd, 5, request)  # F_GETLK
    bits.append(code if code < 0 else struct.unpack_from("hhqqi4x", request.raw)[0] != 2)  # 2: F_UNLCK
results = {"F_GETLK": bits, "flock": call("flock", fd, 1 | 4)}  # LOCK_SH | LOCK_NB
watcher = call("inotify_init1", 0)
results["inotify_init1"] = watcher
if watcher >= 0:
    results["inotify_add_watch"] = call("inotify_add_watch", watcher, os.path.dirname(sys.argv[1]).encode(), 0x20)
print(json.dumps(results))
"""
)


def run_python(box: Sandbox, program: str, *arguments: str, timeout: float = 60):
    quoted = " ".join(f"'{argument}'" for argument in arguments)
    return box.execute(f"python3 - {quoted} <<'PROGRAM'\n{program}\nPROGRAM", timeout)


@pytest.fixture
def two_episodes(collection: Path, make_sandbox):
    boxes = [make_sandbox(collection, name, SandboxSettings()) for name in ("sender", "receiver")]
    for box in boxes:
        box.start()
    yield boxes
    for box in boxes:
        box.close()


@pytest.mark.parametrize("make_sandbox", CHANNEL_BACKENDS, indirect=True)
def test_a_lock_set_in_one_episode_is_not_read_by_another(two_episodes):
    sender, receiver = two_episodes
    answer = 0b10110101
    sent: dict[str, object] = {}
    sending = threading.Thread(
        target=lambda: sent.update(result=run_python(sender, SENDER, "documents/report.md", str(answer), "3"))
    )
    sending.start()
    try:
        received = run_python(receiver, RECEIVER, "documents/report.md")
    finally:
        sending.join()
    sender_view = json.loads(sent["result"].stdout)  # type: ignore[attr-defined]
    receiver_view = json.loads(received.stdout)
    refused = -errno.ENOLCK
    assert sender_view == {"flock": refused, "F_SETLK": [refused] * 5, "F_OFD_SETLK": [refused] * 5}
    assert receiver_view["F_GETLK"] == [refused] * 8, receiver_view
    assert receiver_view["flock"] == refused
    assert receiver_view["inotify_init1"] == -errno.ENOSYS and "inotify_add_watch" not in receiver_view


@pytest.mark.parametrize("make_sandbox", CHANNEL_BACKENDS, indirect=True)
def test_locks_and_watches_are_refused_on_every_shared_file(collection: Path, make_sandbox):
    """/usr and the Python environment are shared between every local episode on the machine, like the
    collection: the same refusal there, and on the episode's own scratch (a filter cannot tell them apart)."""
    box = make_sandbox(collection, "shared", SandboxSettings())
    box.start()
    try:
        results = [
            json.loads(run_python(box, RECEIVER, path).stdout)
            for path in ("/usr/bin/env", "documents/report.md", "/workspace/run/own")
            if box.execute(": > /workspace/run/own", 10).exit_code == 0
        ]
    finally:
        box.close()
    assert len(results) == 3
    for result in results:
        assert result["flock"] == -errno.ENOLCK and result["F_GETLK"] == [-errno.ENOLCK] * 8, result
        assert result["inotify_init1"] == -errno.ENOSYS


PROBES = (
    _SYSCALLS
    + """
families = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16, "AF_PACKET": 17, "AF_ALG": 38,
            "AF_VSOCK": 40, "AF_XDP": 44, "AF_VSOCK+high": (1 << 32) | 40, "AF_UNIX+high": (1 << 32) | 1}
results = {name: call("socket", family, 1 if name != "AF_NETLINK" else 3, 0) for name, family in families.items()}
results = {name: "ok" if code >= 0 else -code for name, code in results.items()}
pair = (ctypes.c_int * 2)()
results["socketpair AF_UNIX"] = call("socketpair", 1, 1, 0, pair)
results["socketpair AF_VSOCK"] = -call("socketpair", 40, 1, 0, pair)
fd = os.open("documents/report.md", os.O_RDONLY)
results["F_SETLK+high"] = -lock(fd, (1 << 32) | 6, 0)
results["F_NOTIFY"] = -call("fcntl", fd, 1026, 0)
results["F_GETFL"] = call("fcntl", fd, 3, 0) >= 0
results["cachestat"] = -call("cachestat", fd, ctypes.create_string_buffer(16), ctypes.create_string_buffer(64), 0)
buffer = ctypes.create_string_buffer(64)
vector = struct.pack("PN", ctypes.addressof(buffer), 64)
results["preadv2 RWF_NOWAIT"] = -call("preadv2", fd, ctypes.create_string_buffer(vector), 1, 0, 0, 8)
results["preadv2"] = call("preadv2", fd, ctypes.create_string_buffer(vector), 1, 0, 0, 0)
print(json.dumps(results))
"""
)


@pytest.mark.parametrize("make_sandbox", CHANNEL_BACKENDS, indirect=True)
def test_socket_families_are_an_allow_list_and_probes_of_shared_state_are_refused(collection: Path, make_sandbox):
    box = make_sandbox(collection, "families", SandboxSettings())
    box.start()
    try:
        result = run_python(box, PROBES)
    finally:
        box.close()
    seen = json.loads(result.stdout)
    unsupported = errno.EAFNOSUPPORT
    assert seen == {
        "AF_UNIX": "ok",
        **{name: unsupported for name in ("AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET", "AF_ALG", "AF_VSOCK")},
        "AF_XDP": unsupported,
        "AF_VSOCK+high": unsupported,
        "AF_UNIX+high": unsupported,
        "socketpair AF_UNIX": 0,
        "socketpair AF_VSOCK": unsupported,
        "F_SETLK+high": errno.ENOLCK,
        "F_NOTIFY": errno.EINVAL,
        "F_GETFL": True,
        "cachestat": errno.ENOSYS,
        "preadv2 RWF_NOWAIT": errno.EOPNOTSUPP,
        "preadv2": len((collection / "report.md").read_bytes()),
    }, result.stderr


def test_closed_book_episodes_get_an_empty_folder_each(tmp_path: Path):
    from harness.sandboxes.closed_book import ClosedBookBackend

    made: list[Path] = []

    class Recording:
        facts: ClassVar[dict[str, object]] = {}
        capabilities = None

        def new_sandbox(self, domain, collection, episode_name, cancel):
            made.append(collection)
            return _Closing()

    backend = ClosedBookBackend(Recording())  # type: ignore[arg-type]
    first = backend.new_sandbox("law", tmp_path, "a", threading.Event())
    second = backend.new_sandbox("law", tmp_path, "b", threading.Event())
    assert made[0] != made[1] and all(path.is_dir() and not any(path.iterdir()) for path in made)
    first.start()
    first.close()
    second.close()
    assert not any(path.exists() for path in made)


class _Closing:
    def start(self) -> None: ...

    def close(self) -> None: ...

    def describe(self) -> dict[str, object]:
        return {}

    def execute(self, command: str, timeout_s: float):
        raise AssertionError("not run")


RECEIVE_AS_ANSWER = (
    _SYSCALLS
    + """
time.sleep(3)
fd = os.open("/workspace/documents/ledger.md", os.O_RDONLY)
value = 0
for offset in range(8):
    request = ctypes.create_string_buffer(struct.pack("hhqqi4x", 1, 0, offset, 1, 0))
    code = call("fcntl", fd, 5, request)
    print("F_GETLK", offset, code)
    if code == 0 and struct.unpack_from("hhqqi4x", request.raw)[0] != 2:
        value |= 1 << offset
print("<" + "answer>%d</answer>" % value)
"""
)


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_an_episode_graded_correct_for_a_value_another_episode_sent_it_is_not(
    mini, sandbox, request: pytest.FixtureRequest
):
    """The attacks as the issues ran them, through the command line: two tasks at once; the sender locks the
    bits of 42 on a document (issue 37) and raises the machine's AIO and pty counters by 42 (issue 45), the
    receiver reads them back as its answer (gold 42) with a command that prints it."""
    arguments = []
    if sandbox == "docker":
        _, image = request.getfixturevalue("docker_image")
        arguments = ["--sandbox", "docker", "--image", image]
    task = {"domain": "mini", "question": "Q?", "answer": "42", "answer_format": "integer"}
    tasks = [{"id": "sender", **task}, {"id": "receiver", **task}]
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    sender = (
        f"python3 - 42 10 <<'COUNTERS' &\n{COUNTER_SENDER}\nCOUNTERS\n"
        f"python3 - /workspace/documents/ledger.md 42 10 <<'PROGRAM'\n{SENDER}\nPROGRAM\nwait"
    )
    receiver = "python3 - <<'PROGRAM' # <answer>\n" + RECEIVE_AS_ANSWER + "\nPROGRAM"
    script = mini.root / "channel.yaml"
    script.write_text(
        json.dumps({"tasks": {"sender": [{"bash": sender}, "<answer>0</answer>"], "receiver": [{"bash": receiver}]}})
    )
    outcome = mini.run("--model", f"scripted:{script}", "--workers", "2", *arguments)
    rows = {row["task_id"]: row for row in outcome.rows}
    assert (rows["receiver"]["answer"], rows["receiver"]["verdict"]) == ("0", "wrong_value"), rows["receiver"]


@pytest.mark.parametrize(
    "make_sandbox", ["local", "local-setpriv", "local-caller", "docker", "e2b-emulator"], indirect=True
)
def test_the_machines_lock_table_is_not_shown_to_an_episode(collection: Path, make_sandbox):
    """/proc/locks lists open-file-description locks of every process on the machine (they have no pid to
    filter by): the runner's claims of its episodes' host uids, another run's among them, and when each
    episode starts and ends (issue 45, class 12: Docker's showed the host's)."""
    box = make_sandbox(collection, "lock-table", SandboxSettings())
    box.start()
    try:
        result = box.execute("wc -c < /proc/locks", 30)
    finally:
        box.close()
    assert result.stdout.strip() == "0", result.stdout + result.stderr

"""The survey of the machine's kernel counters, run inside a sandbox (issue 45, class 1).

`SURVEY` is a Python program an agent could run: it reads every file of /proc (but the processes' own
folders) and of /sys, twice at rest and once more after moving every counter it knows how to move (an AIO
context of 4321 events, ptys, 700 open files, 30 TCP sockets, 5 syncs of the collection's file system, 900 new
files, 55 forks, 20 threads, 16 MB on its tmpfs),
and prints as JSON what each move returned and which files changed only after the moves. A file that did
is a counter the sandbox moved and reads: a channel, unless the kernel keeps it per namespace. It ran on
the host to find the candidates (harness/sandboxes/kernel_counters.py says what it found); the tests run
it in each backend's sandbox.

`SENDER` and `RECEIVER` are the two ends of the channel as the issue's attacker ran them: the sender moves
aio-nr by the value and opens that many ptys, the receiver reads both counters as the value.
"""

from __future__ import annotations

_CALLS = """
import ctypes, json, os, platform, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
IO_SETUP = {"x86_64": 206, "aarch64": 0}[platform.machine()]
def io_setup(events):
    context = ctypes.c_ulong(0)
    result = libc.syscall(IO_SETUP, ctypes.c_long(events), ctypes.byref(context))
    return result if result >= 0 else -ctypes.get_errno()
def open_ptys(count):
    opened = []
    for _ in range(count):
        try:
            primary = os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
        except OSError as error:
            return opened, error.strerror
        try:
            os.ttyname(primary)  # a pty's multiplexer names a terminal; /dev/null does not
        except OSError as error:
            os.close(primary)
            return opened, error.strerror
        opened.append(primary)
    return opened, None
def read(path):
    try:
        with open(path, "rb") as counter:
            return counter.read(65536).decode(errors="replace")
    except OSError as error:
        return error.strerror
"""

SURVEY = (
    _CALLS
    + """
LEFT_OUT = ("/proc/self", "/proc/thread-self", "/proc/kmsg", "/proc/kcore", "/proc/sysrq-trigger",
            "/proc/sys/kernel/random/uuid", "/sys/kernel/debug", "/sys/kernel/tracing", "/sys/module")
def files():
    for top in ("/proc", "/sys"):
        for folder, folders, names in os.walk(top):
            folders[:] = [name for name in folders if not name.isdigit() and os.path.join(folder, name) not in LEFT_OUT
                          and not (folder == "/proc" and name in ("bus", "irq", "tty"))]
            for name in names:
                path = os.path.join(folder, name)
                if not path.startswith(LEFT_OUT):
                    yield path
def snapshot(paths):
    seen = {}
    for path in paths:
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                seen[path] = os.read(descriptor, 65536)
            finally:
                os.close(descriptor)
        except OSError:
            pass
    return seen
paths = sorted(files())
first = snapshot(paths)
time.sleep(0.5)
rest = snapshot(paths)
moves = {"io_setup": io_setup(4321)}
ptys, refused = open_ptys(37)
moves["ptys"] = refused or len(ptys)
held = [os.open("/dev/null", os.O_RDONLY) for _ in range(700)]
import socket
try:
    sockets = [socket.socket() for _ in range(30)]
    moves["tcp sockets"] = len(sockets)
except OSError as error:
    moves["tcp sockets"] = error.strerror
documents = os.open("/workspace/documents", os.O_RDONLY)  # read-only, on the host's file system
moves["syncfs"] = [libc.syncfs(documents) for _ in range(5)]
os.makedirs("/tmp/survey", exist_ok=True)
for number in range(900):
    open(f"/tmp/survey/{number}", "w").close()
with open("/tmp/survey/large", "wb") as large:
    large.write(b"\\1" * (16 << 20))
for _ in range(55):
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
stop = threading.Event()
threads = [threading.Thread(target=stop.wait) for _ in range(20)]
for thread in threads:
    thread.start()
moved = snapshot(paths)
stop.set()
print(json.dumps({
    "moves": moves,
    "moved": sorted(path for path in rest if first[path] == rest[path] != moved.get(path)),
    "counters": {path: read(path) for path in sys.argv[1:]},
}))
"""
)

SENDER = (
    _CALLS
    + """
value = int(sys.argv[1])
ptys, refused = open_ptys(value)
print(json.dumps({"io_setup": io_setup(value), "ptys": refused or len(ptys)}), flush=True)
time.sleep(float(sys.argv[2]))
"""
)

RECEIVER = (
    _CALLS
    + """
time.sleep(float(sys.argv[1]))
print(json.dumps({"aio-nr": read("/proc/sys/fs/aio-nr").strip(), "pty/nr": read("/proc/sys/kernel/pty/nr").strip()}))
"""
)

PIPE_FILLER = """
import fcntl, os, sys, time
held = []
while True:  # 1 MB of capacity a pipe, until the next would pass /proc/sys/fs/pipe-user-pages-soft (EPERM)
    read, write = os.pipe()
    try:
        fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 1 << 20)
    except OSError:
        break
    held.append((read, write))
held += [os.pipe() for _ in range(32)]  # 16 pages each, never refused: past the soft limit
print(len(held), flush=True)
time.sleep(float(sys.argv[1]))
"""
"""Holds the pipe capacity a uid may have before its new pipes get two pages instead of sixteen (the kernel
counts it per uid, for the whole machine)."""

PIPE_PROBE = """
import fcntl, os, sys, time
time.sleep(float(sys.argv[1]))
read, write = os.pipe()
print(fcntl.fcntl(write, fcntl.F_GETPIPE_SZ))
"""
"""The capacity of a new pipe: 65536, or 8192 while the uid is over its soft limit."""

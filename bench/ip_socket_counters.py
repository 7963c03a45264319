"""Measures whether letting a sandbox open IP sockets in its own empty network namespace would open a channel
between episodes: which /proc/net files a sandbox reads move when another network namespace opens TCP and UDP
sockets and leaves data in their buffers.

The sender is what the relaxation would allow: a process in a user and network namespace of its own (`unshare
-rn`, loopback only) opening SOCKETS TCP pairs over IPv4 and IPv6 on loopback with BYTES unread in each, and as
many UDP sockets with a datagram queued. The receiver is an unchanged local sandbox: it reads every file of
/proc/net (its own namespace's) before, while the sender holds its sockets, and after, and also at rest twice so
that a file moving by itself (the host's own traffic) is told apart. It prints, per file and field, the value at
rest, while sending, and after, for each of the sends.

Run: python bench/ip_socket_counters.py [SOCKETS ...]   (default: 0 37 200)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.local.sandbox import BubblewrapSandbox, find_bwrap

SENDER = r"""
import os, socket, sys, time
count, size = int(sys.argv[1]), int(sys.argv[2])
os.system("ip link set lo up 2>/dev/null || true")
held = []
for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    server = socket.socket(family, socket.SOCK_STREAM)
    server.bind((host, 0))
    server.listen(count + 1)
    held.append(server)
    for _ in range(count):
        client = socket.create_connection(server.getsockname()[:2])
        accepted, _ = server.accept()
        client.sendall(b"x" * size)  # left unread: the receiving socket's buffer holds it
        held += [client, accepted]
    for _ in range(count):
        udp = socket.socket(family, socket.SOCK_DGRAM)
        udp.bind((host, 0))
        socket.socket(family, socket.SOCK_DGRAM).sendto(b"y" * 1024, udp.getsockname()[:2])
        held.append(udp)
print("holding", len(held), flush=True)
sys.stdin.read()
"""

READER = r"""
import json, os
seen = {}
for name in sorted(os.listdir("/proc/net")):
    path = os.path.join("/proc/net", name)
    if os.path.isfile(path):
        try:
            with open(path) as counter:
                seen[name] = counter.read(1 << 16)
        except OSError as error:
            seen[name] = "error: " + error.strerror
print(json.dumps(seen))
"""


def fields(text: str) -> dict[str, str]:
    """A /proc/net file as `line-label:field -> value`, for the `label: name value name value` files (sockstat)
    and as `line -> whole line` otherwise."""
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines()):
        label, _, rest = line.partition(":")
        words = rest.split()
        if words and len(words) % 2 == 0 and all(not word.lstrip("-").isdigit() for word in words[::2]):
            for name, value in zip(words[::2], words[1::2], strict=True):
                values[f"{label}:{name}"] = value
        else:
            values[f"line {number}"] = line
    return values


def read_proc_net(box: BubblewrapSandbox) -> dict[str, dict[str, str]]:
    result = box.execute(f"python3 - <<'PROGRAM'\n{READER}\nPROGRAM", 30)
    return {name: fields(text) for name, text in json.loads(result.stdout).items()}


def changed(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> set[tuple[str, str]]:
    return {
        (name, key)
        for name, values in after.items()
        for key, value in values.items()
        if before.get(name, {}).get(key) != value
    }


def main(counts: list[int]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        collection = Path(folder) / "collection"
        collection.mkdir()
        (collection / "a.txt").write_text("a\n")
        box = BubblewrapSandbox(collection, "receiver", SandboxSettings(output_limit_bytes=4_000_000), find_bwrap())
        box.start()
        try:
            probe = box.execute("python3 -c 'import socket; socket.socket(socket.AF_INET)' 2>&1 | tail -1", 30)
            print("receiver's own IP socket:", probe.stdout.strip())
            for count in counts:
                rest = read_proc_net(box)
                time.sleep(0.5)
                noise = changed(rest, read_proc_net(box))
                sender = subprocess.Popen(
                    ["unshare", "-rn", sys.executable, "-c", SENDER, str(count), "65536"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                assert sender.stdout is not None and sender.stdin is not None
                print(
                    f"\nsender in its own netns, {count} TCP pairs + {count} UDP per family:",
                    sender.stdout.readline().strip(),
                )
                during = read_proc_net(box)
                sender.stdin.close()
                sender.wait()
                time.sleep(0.5)
                after = read_proc_net(box)
                moved = changed(rest, during) - noise
                for name, key in sorted(moved):
                    print(
                        f"  {name:14} {key:24} rest {rest[name].get(key)!s:>8}  sending {during[name].get(key)!s:>8}"
                        f"  after {after[name].get(key)!s:>8}"
                    )
                if not moved:
                    print("  nothing moved beyond the host's own noise")
                print("  moving at rest (host noise, left out):", sorted(noise) or "none")
        finally:
            box.close()


if __name__ == "__main__":
    main([int(argument) for argument in sys.argv[1:]] or [0, 37, 200])

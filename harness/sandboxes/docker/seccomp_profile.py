"""The seccomp profile of every Docker sandbox: the engine's default, made ours and the same on every version.

The engine's built-in default changes with its version (20.10 lets AF_VSOCK and AF_ALG sockets through, 23
refuses AF_VSOCK, 2026's refuses AF_ALG), so each container is started with this profile instead:

- moby's default profile (`moby_default_seccomp.json`, vendored unchanged from github.com/moby/profiles,
  `seccomp/default.json` at commit cd3bed8 of 2026-06-30, Apache License 2.0): an allow-list, default EPERM;
- every entry naming a call of `syscall_policy.RESTRICTIONS` loses that name, and the restriction's own rules
  take its place: its allowed values as allow rules, its refused values as errno rules;
- the 32-bit ABIs (i386 and x32 on x86-64, arm on arm64) are left out of the architectures, so their calls
  (`socketcall`, `fcntl64`, which the rules do not speak of) never reach the kernel, as in the local filter.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from harness.sandboxes.syscall_policy import RESTRICTIONS, ArgTest

_MOBY_DEFAULT = "moby_default_seccomp.json"


@functools.cache
def seccomp_profile() -> str:
    """The profile as Docker's API takes it (`security_opt=["seccomp=" + profile]`): compact JSON."""
    profile = json.loads(resources.files(__package__).joinpath(_MOBY_DEFAULT).read_text())
    restricted = {restriction.syscall for restriction in RESTRICTIONS}
    entries = []
    for entry in profile["syscalls"]:
        names = [name for name in entry["names"] if name not in restricted]
        if names:
            entries.append(entry | {"names": names})
    for restriction in RESTRICTIONS:
        for test in restriction.allowed:
            entries.append({"names": [restriction.syscall], "action": "SCMP_ACT_ALLOW", "args": [_argument(test)]})
        for refused in restriction.refused or (None,):
            entries.append(
                {
                    "names": [restriction.syscall],
                    "action": "SCMP_ACT_ERRNO",
                    "errnoRet": restriction.errno,
                    "args": [_argument(refused)] if refused else [],
                }
            )
    native_only = [{"architecture": arch["architecture"], "subArchitectures": []} for arch in profile["archMap"]]
    return json.dumps(profile | {"archMap": native_only, "syscalls": entries}, separators=(",", ":"))


def _argument(test: ArgTest) -> dict[str, Any]:
    """Docker's form of a comparison: for MASKED_EQ, `value` is the mask and `valueTwo` the datum."""
    return {"index": test.index, "value": test.value, "valueTwo": test.datum, "op": f"SCMP_CMP_{test.op}"}

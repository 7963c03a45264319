"""The emulator's template build: the SDK's recorded steps between E2B's base and finalize phases, as
Dockerfile layers, with E2B's layer cache (e2b-dev/infra, packages/orchestrator/pkg/template/build/)."""

from __future__ import annotations

import base64
import hashlib
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import docker
import e2b
from e2b.template.consts import RESOLVE_SYMLINKS
from e2b.template.utils import read_dockerignore, tar_file_stream

from harness.sandboxes.recipe import DEBOOTSTRAP_IMAGE

LABEL = "harness.e2b-emulator"

BASE_PHASE = r"""set -eu
if ! dpkg-query -W -f='${Status}' sudo 2>/dev/null | grep -q 'install ok installed'; then
  apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get -qq install -y --no-install-recommends sudo
  rm -rf /var/lib/apt/lists/*
fi
echo "export SHELL='/bin/bash'" >/etc/profile.d/shell.sh
echo "export PS1='\w \$ '" >/etc/profile.d/prompt.sh
echo "export PS1='\w \$ '" >>/etc/profile
echo "if [ -f ~/.bashrc ]; then source ~/.bashrc; fi; if [ -f ~/.profile ]; then source ~/.profile; fi" >>/etc/profile
passwd -d root
if ! id -u user >/dev/null 2>&1; then useradd -m -s /bin/bash user; fi
usermod -aG sudo user
passwd -d user
echo "user ALL=(ALL:ALL) NOPASSWD: ALL" >>/etc/sudoers
"""
FRESH_BOOT = "find /tmp/ -mindepth 1 -delete\n"
"""What a fresh boot of the build sandbox leaves in /tmp: nothing (systemd mounts a tmpfs there)."""
FINALIZE_PHASE = r"""set -eu
if ! id -u user >/dev/null 2>&1; then useradd -m -s /bin/bash user; fi
grep -q '^user ALL=(ALL:ALL) NOPASSWD: ALL' /etc/sudoers || echo "user ALL=(ALL:ALL) NOPASSWD: ALL" >>/etc/sudoers
mkdir -p /home/user && chown -R user:user /home/user
chmod -R 777 /usr/local
mkdir -p /code && chmod -R 777 /code
"""


def _run_as(user: str, script: str) -> str:
    """A Dockerfile RUN of a shell script (heredoc-free: the script travels base64-encoded)."""
    encoded = base64.b64encode(script.encode()).decode()
    return f"USER {user}\nRUN echo {encoded} | base64 -d > /tmp/step.sh && bash /tmp/step.sh; rm -f /tmp/step.sh\n"


@dataclass(frozen=True)
class Layer:
    """One step of a build as E2B caches it: its Dockerfile lines, and the key of the layer it leaves (the
    previous key and this step, as infra `phases/steps/hash.go` chains them)."""

    dockerfile: str
    key: str


def _chain(previous: str, step: object) -> str:
    return hashlib.sha256(f"{previous}\0{step}".encode()).hexdigest()


def write_keyed_tar(packed: IO[bytes], target: Path) -> None:
    """The SDK's tar of a COPY step with what E2B's layer key leaves out zeroed: each file's mtime and owner
    (the SDK's `calculate_files_hash` takes paths, modes, sizes and bytes). The same files, copied afresh into
    another test's context, then make the same tar, which Docker's build cache finds as E2B's cache finds the
    layer, instead of installing the recipe's packages again after it; the COPY's chown sets the owner."""
    with tarfile.open(fileobj=packed) as source, tarfile.open(target, "w", format=tarfile.PAX_FORMAT) as keyed:
        for member in source:
            member.mtime, member.uid, member.gid, member.uname, member.gname = 0, 0, 0, "root", "root"
            member.pax_headers = {}
            keyed.addfile(member, source.extractfile(member) if member.isfile() else None)


def build_layers(template: Any, work: Path) -> list[Layer]:
    """Translate the SDK's recorded steps into Dockerfile layers over `work` (COPY sources packed by the SDK)."""
    inner = template._template
    context = inner._file_context_path
    ignore = [*read_dockerignore(context), *inner._file_ignore_patterns]
    key = _chain(docker.from_env().images.get(DEBOOTSTRAP_IMAGE).id, BASE_PHASE)
    layers = [Layer(f"FROM {DEBOOTSTRAP_IMAGE}\n{_run_as('root', BASE_PHASE)}", key)]
    user = "root"
    for index, step in enumerate(inner._instructions_with_hashes()):
        kind, args = step["type"].value, step["args"]
        if kind == "USER":
            user = args[0]
            lines = f"USER {user}\n"
        elif kind == "WORKDIR":
            lines = f"WORKDIR {args[0]}\n"
        elif kind == "ENV":
            pairs = " ".join(f'{args[i]}="{args[i + 1]}"' for i in range(0, len(args), 2))
            lines = f"ENV {pairs}\n"
        elif kind == "RUN":
            lines = f"USER {args[1] if len(args) > 1 and args[1] else user}\nRUN {args[0]}\nUSER {user}\n"
        elif kind == "COPY":
            src, dest, owner = args[0], args[1], args[2] or user
            resolve = step.get("resolveSymlinks")
            packed = tar_file_stream(src, context, ignore, RESOLVE_SYMLINKS if resolve is None else resolve, False)
            staging = f"/tmp/e2b-copy-{index}"
            write_keyed_tar(packed, work / f"copy-{index}.tar")
            # E2B copies a folder's contents to dest, a file to dest (or into it when dest ends with /).
            source = f"{staging}/{src}"
            lines = (
                f"USER root\nADD copy-{index}.tar {staging}/\n"
                f"RUN if [ -d {source} ]; then mkdir -p {dest} && cp -a {source}/. {dest}; "
                f"else case {dest} in */) mkdir -p {dest} ;; *) mkdir -p $(dirname {dest}) ;; esac "
                f"&& cp -a {source} {dest}; fi "
                f"&& chown -R {owner}: {dest} && rm -rf {staging}\nUSER {user}\n"
            )
        else:
            raise e2b.BuildException(f"emulator: step {kind} not emulated")
        key = _chain(key, (kind, args, step.get("filesHash"), user))
        layers.append(Layer(lines, key))
    layers.append(Layer(_run_as("root", FINALIZE_PHASE), _chain(key, FINALIZE_PHASE)))
    return layers


def build_dockerfile(layers: list[Layer], cached: set[str], failing: str | None) -> tuple[str, int | None]:
    """The Dockerfile E2B's builder effectively runs, and the index of the layer that fails (or None).

    Cached layers are taken as they are; the first layer that is not starts a fresh sandbox from the cached
    one (infra `phases/steps/builder.go`: "First not cached layer is create", later ones resume), and a
    fresh boot has an empty /tmp (a tmpfs). A RUN layer containing `failing` fails, as a network blip
    would, and the layers after it are not built."""
    first = next((i for i, layer in enumerate(layers) if layer.key not in cached), len(layers))
    lines = [layer.dockerfile for layer in layers[:first]]
    if 0 < first < len(layers):
        lines.append(_run_as("root", FRESH_BOOT))
    for index in range(first, len(layers)):
        if failing and failing in layers[index].dockerfile and "RUN " in layers[index].dockerfile:
            return "".join([*lines, "RUN echo 'network unreachable' >&2; exit 1\n"]), index
        lines.append(layers[index].dockerfile)
    return "".join(lines), None


def inputs_hash(work: Path) -> str:
    """What the image is built from: the base image, the Dockerfile and the packed files (keyed tars, the same
    for the same files), so a template is built once, then found by tag."""
    digest = hashlib.sha256(docker.from_env().images.get(DEBOOTSTRAP_IMAGE).id.encode())
    for path in sorted(work.iterdir()):
        content = path.read_bytes()
        digest.update(f"{path.name}\0{len(content)}\0".encode() + content)
    return digest.hexdigest()[:16]


def image_exists(image: str) -> bool:
    try:
        docker.from_env().images.get(image)
    except docker.errors.ImageNotFound:
        return False
    return True


def docker_build(work: str, image: str, on_build_logs: Any) -> None:
    for chunk in docker.from_env().api.build(path=work, tag=image, rm=True, decode=True, labels={LABEL: "1"}):
        if "error" in chunk:
            raise e2b.BuildException(f"emulator build failed: {chunk['error'].strip()}")
        if on_build_logs and chunk.get("stream", "").strip():
            on_build_logs(chunk["stream"].strip())

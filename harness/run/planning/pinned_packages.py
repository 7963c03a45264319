"""The packages that shape a request, a record or a grade: pinned exactly in pyproject.toml (and so in
constraints.txt), and their resolved versions recorded in run.yaml under `packages:`.

litellm builds every provider request and maps every reply; openai and httpx carry them on the wire; pydantic
is the shape of litellm's replies; tiktoken and tokenizers count the tokens that decide the context budget;
pyyaml writes and reads the run's records and inputs; jinja2 renders the prompts; pyseccomp and pyahocorasick
were pinned before for the sandbox's filter and the leakage check; pillow decides which images a request may carry
(their format, size and dimensions, `core/images.py`).
"""

from __future__ import annotations

from importlib import metadata

PINNED_PACKAGES = (
    "litellm",
    "openai",
    "httpx",
    "pydantic",
    "tiktoken",
    "tokenizers",
    "pyyaml",
    "jinja2",
    "pyseccomp",
    "pyahocorasick",
    "pillow",
)
"""Distribution names, as pyproject.toml's `dependencies` pin them with `==`."""


def resolved_versions() -> dict[str, str | None]:
    """The installed version of each pinned package (None: not installed, which an install from pyproject
    cannot give)."""
    versions: dict[str, str | None] = {}
    for name in PINNED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions

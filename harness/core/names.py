"""Names from user data that become file, folder, cgroup and container names: validated, and injective."""

from __future__ import annotations

import hashlib
import re

from harness.core.errors import InputError

_DOMAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_RUN_ID = re.compile(r"[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]{0,119}")
_SAFE_AS_IS = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}")
_UNSAFE_CHARACTER = re.compile(r"[^A-Za-z0-9_.-]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # C0, DEL, C1 and Unicode line breaks
_MAX_TASK_ID = 200


def is_domain_name(name: str) -> bool:
    return _DOMAIN.fullmatch(name) is not None


def check_domain_name(name: str, where: str) -> None:
    if not is_domain_name(name):
        raise InputError(
            f"{where}: {name[:80]!r} is not a domain name (letters, digits, _ and -, at most 64, no leading _ or -)"
        )


def check_run_id(run_id: str) -> None:
    if not _RUN_ID.fullmatch(run_id):
        raise InputError(
            f"--run-id: {run_id[:80]!r} is not a run id (letters, digits and _ . @ + -, at most 120, no leading .)"
        )


def check_task_id(task_id: str, where: str) -> None:
    if len(task_id) > _MAX_TASK_ID:
        raise InputError(f"{where}: field 'id': {len(task_id)} characters, at most {_MAX_TASK_ID}")
    if _CONTROL.search(task_id) or task_id.strip() != task_id:
        raise InputError(f"{where}: field 'id': {task_id!r} holds control characters or surrounding blanks")


_MAX_LABEL = 120


def check_label(label: str, where: str) -> None:
    """A run label is shown in tables: one line of visible text."""
    if not label.strip() or len(label) > _MAX_LABEL or _CONTROL.search(label) or label.strip() != label:
        raise InputError(
            f"{where}: {label[:80]!r} is not a label (1 to {_MAX_LABEL} characters, one line, no surrounding blanks)"
        )


def file_name(text: str) -> str:
    """A file name for `text`, injective: a safe text is kept as is; any other becomes a readable part and
    `~` plus a hash of the whole text (no kept-as-is name contains `~`, so the two kinds never meet)."""
    if _SAFE_AS_IS.fullmatch(text):
        return text
    readable = _UNSAFE_CHARACTER.sub("_", text)[:60].lstrip(".")
    return f"{readable}~{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


_REFERENCE_AS_IS = re.compile(r"[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*")
_NOT_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]+")


def reference_name(text: str) -> str:
    """A name for `text` that Docker takes as a part of an image or compose project name (alphanumerics joined by
    single `-` or `_`, as Harbor names its images and projects after a task's folder), injective: a text that is one
    already is kept as is; any other becomes a readable part and `__` plus a hash of the whole text (no kept-as-is
    name holds `__`, so the two kinds never meet)."""
    if _REFERENCE_AS_IS.fullmatch(text):
        return text
    readable = _NOT_ALPHANUMERIC.sub("-", text).strip("-")[:60].rstrip("-")
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{readable}__{digest}" if readable else digest

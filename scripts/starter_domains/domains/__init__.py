"""The eight starter domains, one module each: its documents (`SPLITS`, `copies`) and its task table (`TASKS`)."""

from __future__ import annotations

from ..spec import Domain
from . import agri, arch, biz, edu, fin, health, law, tech

DOMAINS: dict[str, Domain] = {m.DOMAIN.name: m.DOMAIN for m in (agri, arch, biz, edu, fin, health, law, tech)}

"""The eight starter domains: each a data file, <name>.yaml (its table documents and its task table, read by
domain_file.py), and a module, <name>.py (the functions that load its data sets, the files it copies, `DOMAIN`)."""

from __future__ import annotations

from ..spec import Domain
from . import agri, arch, biz, edu, fin, health, law, tech

DOMAINS: dict[str, Domain] = {m.DOMAIN.name: m.DOMAIN for m in (agri, arch, biz, edu, fin, health, law, tech)}

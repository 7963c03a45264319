"""Agriculture, resources and energy: US natural gas demand, Minnesota barley trials (German), Australian
electricity and gas production, EU agricultural workforce (French)."""

from __future__ import annotations

from typing import Any

from ..domain_file import read_domain
from ..sources import Debs, rdata, rdocs
from ..spec import Copy

EU_COUNTRIES = {
    "B": "Belgique",
    "DK": "Danemark",
    "D": "Allemagne",
    "GR": "Grèce",
    "E": "Espagne",
    "F": "France",
    "IRL": "Irlande",
    "I": "Italie",
    "L": "Luxembourg",
    "NL": "Pays-Bas",
    "P": "Portugal",
    "UK": "Royaume-Uni",
}


def barley() -> Any:
    data = rdata("lattice", "barley")
    wide = data.pivot_table(index=["site", "variety"], columns="year", values="yield").reset_index()
    wide.columns = [str(c) for c in wide.columns]
    return wide


def agriculture() -> Any:
    agr = rdata("cluster", "agriculture")
    agr["pays"] = [EU_COUNTRIES[c] for c in agr.rownames]
    agr["groupe"] = ["fondateurs" if c in ("B", "D", "F", "I", "L", "NL") else "adhesions" for c in agr.rownames]
    return agr


def copies(debs: Debs) -> list[Copy]:
    return rdocs(
        [
            ("AER", "NaturalGas", "aer-naturalgas"),
            ("lattice", "barley", "lattice-barley"),
            ("fpp2", "qauselec", "fpp2-qauselec"),
            ("fpp2", "qgas", "fpp2-qgas"),
        ]
    )


DOMAIN = read_domain("agri", copies, barley, agriculture)

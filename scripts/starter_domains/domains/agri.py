"""Agriculture, resources and energy: US natural gas demand, Minnesota barley trials (German), Australian
electricity and gas production, EU agricultural workforce (French)."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..sources import Debs, rdata, rdocs
from ..spec import Copy, Domain, Ref, Split, Task, each
from ..splits import quarter, quarters, series, slug

GAS_STATES = {"NY": "New York", "FL": "Florida", "MI": "Michigan", "TX": "Texas", "UT": "Utah", "CA": "California"}
SITES = ["University Farm", "Waseca", "Morris", "Crookston", "Grand Rapids", "Duluth"]
DECADES = [(1956, 1965), (1966, 1975), (1976, 1985), (1986, 1995), (1996, 2005), (2006, 2010)]
EU_COUNTRIES = {
    "B": "Belgique", "DK": "Danemark", "D": "Allemagne", "GR": "Grèce", "E": "Espagne", "F": "France",
    "IRL": "Irlande", "I": "Italie", "L": "Luxembourg", "NL": "Pays-Bas", "P": "Portugal", "UK": "Royaume-Uni",
}  # fmt: skip


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


SPLITS = [
    Split(
        "gas", partial(rdata, "AER", "NaturalGas"), "state", list(GAS_STATES), "year",
        [("consumption", "Residential gas consumption", 0), ("price", "Gas price", 2),
         ("eprice", "Electricity price", 2), ("oprice", "Oil price", 2), ("heating", "Heating degree days", 0),
         ("income", "Real per-capita income (USD)", 2)],
        source="aer-naturalgas", stem=lambda st: f"natural-gas-demand-{slug(GAS_STATES[st])}-1967-1989",
        kind="xlsx", title=lambda st: f"Residential natural gas demand in {GAS_STATES[st]}, 1967-1989",
        intro="Natural gas demand panel of six US states (AER package, data set NaturalGas, from Maddala et al.).",
        key_label="Year",
    ),
    Split(
        "barley", barley, "site", SITES, "variety",
        [("1931", "Ertrag 1931 (Scheffel je Acre)", 3), ("1932", "Ertrag 1932 (Scheffel je Acre)", 3)],
        source="lattice-barley", stem=lambda site: f"gerstenertraege-versuchsstation-{slug(site)}-1931-1932",
        kind="html", title=lambda site: f"Gerstenerträge der Versuchsstation {site} (Minnesota), 1931 und 1932",
        intro="Feldversuch mit zehn Gerstensorten an sechs Standorten in Minnesota (Immer et al. 1934), "
        "Datensatz barley des R-Pakets lattice. Erträge in Scheffel (bushel) je Acre, Dezimalkomma.",
        key_label="Sorte", lang="de",
    ),
    series(
        "elec", partial(rdata, "fpp2", "qauselec"), quarter, DECADES, ("Electricity production (billion kWh)", 3),
        source="fpp2-qauselec", stem=lambda p: f"australia-quarterly-electricity-production-{p}", kind="md",
        title=lambda p: f"Australia: quarterly electricity production, {p}",
        intro="Total quarterly electricity production in Australia, billion kWh (fpp2 package, data set "
        "qauselec; source: Australian Bureau of Statistics).", key_label="Quarter",
    ),
    series(
        "qgas", partial(rdata, "fpp2", "qgas"), quarter, DECADES, ("Gas production (petajoules)", 3),
        source="fpp2-qgas", stem=lambda p: f"australia-quarterly-gas-production-{p}", kind="csv",
        title=lambda p: f"Australia: quarterly gas production, {p}",
        intro="Quarterly gas production in Australia (fpp2, qgas; Australian Bureau of Statistics).",
        key_label="Quarter",
    ),
    Split(
        "eu", agriculture, "groupe", ["fondateurs", "adhesions"], "pays",
        [("x", "PNB par habitant (milliers d'écus)", 1), ("y", "Population active agricole (%)", 1)],
        source="cluster-agriculture", stem=lambda g: f"population-active-agricole-ue-1993-pays-{g}", kind="html",
        title=lambda g: "Population active agricole dans l'Union européenne, 1993 : "
        + ("pays fondateurs" if g == "fondateurs" else "pays entrés de 1973 à 1986"),
        intro="PNB par habitant et part de la population travaillant dans l'agriculture (jeu de données "
        "agriculture du paquet R cluster ; source : Eurostat). Chiffres avec virgule décimale.",
        key_label="Pays", lang="fr",
    ),
]  # fmt: skip


def copies(debs: Debs) -> list[Copy]:
    return rdocs([("AER", "NaturalGas", "aer-naturalgas"), ("lattice", "barley", "lattice-barley"),
                  ("fpp2", "qauselec", "fpp2-qauselec"), ("fpp2", "qgas", "fpp2-qgas")])  # fmt: skip


CONS, PRICE = "Residential gas consumption", "Gas price"
Y31, Y32 = "Ertrag 1931 (Scheffel je Acre)", "Ertrag 1932 (Scheffel je Acre)"
KWH, PJ = "Electricity production (billion kWh)", "Gas production (petajoules)"
SHARE = "Population active agricole (%)"

TASKS = [
    Task(
        "agri-001",
        "In 1989, how many times larger was residential natural gas consumption in California than in New York?",
        "v[0] / v[1]", "x.xxx x",
        [Ref("gas/CA", "1989", CONS), Ref("gas/NY", "1989", CONS)],
    ),
    Task(
        "agri-002",
        "In 1932, by what percentage was the Trebi barley yield at the Waseca station higher or lower than at the "
        "Morris station (relative to Morris)?",
        "(v[0] / v[1] - 1) * 100", "[sign]x.xxx%",
        [Ref("barley/Waseca", "Trebi", Y32), Ref("barley/Morris", "Trebi", Y32)],
    ),
    Task(
        "agri-003",
        "What was the compound annual growth rate of Australia's quarterly electricity production between the "
        "first quarter of 1960 and the first quarter of 2000?",
        "((v[1] / v[0]) ** (D(1) / D(40)) - 1) * 100", "x.xxx%",
        [Ref("elec/1956-1965", "1960 Q1", KWH), Ref("elec/1996-2005", "2000 Q1", KWH)],
    ),
    Task(
        "agri-004",
        "By what percentage did Australia's annual gas production (sum of the four quarters) grow from 1970 to 1990?",
        "(sum(v[4:]) / sum(v[:4]) - 1) * 100", "x.xxx%",
        [*each("qgas/1966-1975", quarters(1970), PJ), *each("qgas/1986-1995", quarters(1990), PJ)],
    ),
    Task(
        "agri-005",
        "In 1993, by how many percentage points did the share of the population working in agriculture in Greece "
        "exceed that in Italy?",
        "v[0] - v[1]", "[sign]x.xx pp",
        [Ref("eu/adhesions", "Grèce", SHARE), Ref("eu/fondateurs", "Italie", SHARE)],
    ),
    Task(
        "agri-006",
        "What was the average residential natural gas price of Texas, Utah and Florida in 1980? Give the plain "
        "number with two decimals.",
        "sum(v) / 3", "x.xx",
        [Ref("gas/TX", "1980", PRICE), Ref("gas/UT", "1980", PRICE), Ref("gas/FL", "1980", PRICE)],
    ),
    Task(
        "agri-007",
        "What was the total 1931 yield of all ten barley varieties at Duluth and Grand Rapids together, in bushels "
        "per acre (sum of the twenty figures)?",
        "v[0] + v[1]", "x.xxx",
        [Ref("barley/Duluth", "*", Y31), Ref("barley/Grand Rapids", "*", Y31)],
    ),
]  # fmt: skip

DOMAIN = Domain("agri", SPLITS, copies, TASKS)

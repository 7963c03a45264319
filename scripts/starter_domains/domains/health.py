"""Healthcare: UK deaths from lung diseases and car drivers killed or injured, US contagious disease reports
by state, the 2015 US period life table; the survival vignettes."""

from __future__ import annotations

from typing import Any

from ..domain_file import read_domain
from ..sources import Debs, rdata, rdocs
from ..spec import Column, Copy
from ..splits import month


def lung_deaths() -> Any:
    male, female = rdata("datasets", "mdeaths"), rdata("datasets", "fdeaths")
    lung = male.rename(columns={"value": "male"})
    lung["female"] = female.value.to_numpy()
    lung["key"] = [month(t) for t in lung.time]
    lung["year"] = [int(t + 1e-6) for t in lung.time]
    return lung


def disease_cases(name: str) -> Any:
    """Cases of one disease by state (rows) and every fifth year (columns)."""
    data = rdata("dslabs", "us_contagious_diseases")
    part = data[(data.disease == name) & (data.year % 5 == 0)]
    wide = part.pivot_table(index="state", columns="year", values="count", aggfunc="sum").reset_index()
    wide["doc"] = name
    return wide


def year_columns(wide: Any) -> list[Column]:
    return [(y, f"Cases {y}", 0) for y in wide.columns if y not in ("state", "doc")]


def driver_deaths() -> Any:
    drivers = rdata("datasets", "UKDriverDeaths")
    drivers["key"] = [month(t) for t in drivers.time]
    drivers["year"] = [int(t + 1e-6) for t in drivers.time]
    return drivers


def life_table() -> Any:
    life = rdata("dslabs", "death_prob")
    life["key"] = life.age.astype(str)
    return life


def copies(debs: Debs) -> list[Copy]:
    return [
        *debs.pdfs(
            "r-cran-survival",
            "usr/lib/R/library/survival/doc",
            ["survival", "timedep", "compete", "population"],
            "r-cran-survival-vignettes",
        ),
        *rdocs([("dslabs", "us_contagious_diseases", "dslabs-us-contagious-diseases")]),
    ]


DOMAIN = read_domain("health", copies, lung_deaths, disease_cases, year_columns, driver_deaths, life_table)

"""Healthcare: UK deaths from lung diseases and car drivers killed or injured, US contagious disease reports
by state, the 2015 US period life table; the survival vignettes."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..sources import Debs, rdata, rdocs
from ..spec import Column, Copy, Domain, Ref, Split, Task
from ..splits import month, slug

DISEASES = ["Measles", "Mumps", "Pertussis", "Polio", "Rubella", "Hepatitis A", "Smallpox"]


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


SPLITS = [
    Split(
        "lung", lung_deaths, "year", list(range(1974, 1980)), "key",
        [("male", "Male deaths", 0), ("female", "Female deaths", 0)],
        source="r-datasets-uklungdeaths", stem=lambda y: f"uk-monthly-deaths-from-lung-diseases-{y}", kind="csv",
        title=lambda y: f"UK monthly deaths from bronchitis, emphysema and asthma, {y}", intro="", key_label="Month",
    ),
    *(Split(
        "cases", partial(disease_cases, name), "doc", [name], "state", year_columns,
        source="dslabs-us-contagious-diseases", stem=lambda d: f"reported-{slug(d)}-cases-by-us-state",
        kind="xlsx", title=lambda d: f"Reported {d.lower()} cases by US state, every fifth year",
        intro="Weekly case reports summed over each year, as compiled by Project Tycho (dslabs package, data set "
        "us_contagious_diseases). NA: no report that year.", key_label="State",
    ) for name in DISEASES),
    Split(
        "life", life_table, "sex", ["Male", "Female"], "key", [("prob", "Probability of dying within one year", 6)],
        source="dslabs-death-prob", stem=lambda s: f"us-period-life-table-2015-{s.lower()}", kind="html",
        title=lambda s: f"US period life table 2015: {s.lower()} death probabilities by age",
        intro="Probability that a person of the given exact age dies within one year (US Social Security "
        "Administration period life table 2015; dslabs package, data set death_prob).", key_label="Age",
    ),
    Split(
        "road", driver_deaths, "year", list(range(1977, 1985)), "key",
        [("value", "Drivers killed or seriously injured", 0)],
        source="r-datasets-ukdriverdeaths", stem=lambda y: f"great-britain-car-drivers-killed-or-seriously-injured-{y}",
        kind="md", title=lambda y: f"Great Britain: car drivers killed or seriously injured, monthly, {y}",
        intro="Monthly totals of car drivers in Great Britain killed or seriously injured (R datasets package, "
        "UKDriverDeaths, from Harvey and Durbin 1986). Wearing front seat belts became compulsory on 31 January "
        "1983.", key_label="Month",
    ),
]  # fmt: skip


def copies(debs: Debs) -> list[Copy]:
    return [
        *debs.pdfs("r-cran-survival", "usr/lib/R/library/survival/doc",
                   ["survival", "timedep", "compete", "population"], "r-cran-survival-vignettes"),
        *rdocs([("dslabs", "us_contagious_diseases", "dslabs-us-contagious-diseases")]),
    ]  # fmt: skip


MALE, FEMALE = "Male deaths", "Female deaths"
PROB, ROAD = "Probability of dying within one year", "Drivers killed or seriously injured"

TASKS = [
    Task(
        "health-001",
        "By what percentage did the total number of UK deaths from lung diseases (men and women) change from 1974 "
        "to 1979?",
        "((v[2] + v[3]) / (v[0] + v[1]) - 1) * 100", "[sign]x.xxx%",
        [Ref("lung/1974", "*", MALE), Ref("lung/1974", "*", FEMALE),
         Ref("lung/1979", "*", MALE), Ref("lung/1979", "*", FEMALE)],
    ),
    Task(
        "health-002",
        "By how many percentage points did women's share of UK lung-disease deaths change from January 1976 to "
        "January 1978?",
        "(v[2] / (v[2] + v[3]) - v[0] / (v[0] + v[1])) * 100", "[sign]x.xx pp",
        [Ref("lung/1976", "1976-01", FEMALE), Ref("lung/1976", "1976-01", MALE),
         Ref("lung/1978", "1978-01", FEMALE), Ref("lung/1978", "1978-01", MALE)],
    ),
    Task(
        "health-003",
        "What was the ratio of reported measles cases to reported mumps cases in California in 1970?",
        "v[0] / v[1]", "x.xxx x",
        [Ref("cases/Measles", "California", "Cases 1970"), Ref("cases/Mumps", "California", "Cases 1970")],
    ),
    Task(
        "health-004",
        "According to the 2015 US period life table, how many times higher is a 65-year-old man's probability of "
        "dying within a year than a 65-year-old woman's?",
        "v[0] / v[1]", "x.xxx x",
        [Ref("life/Male", "65", PROB), Ref("life/Female", "65", PROB)],
    ),
    Task(
        "health-005",
        "By what percentage did the yearly number of car drivers killed or seriously injured in Great Britain "
        "change from 1982 to 1984?",
        "(v[1] / v[0] - 1) * 100", "[sign]x.xxx%",
        [Ref("road/1982", "*", ROAD), Ref("road/1984", "*", ROAD)],
    ),
    Task(
        "health-006",
        "How many pertussis and polio cases together were reported in New York in 1950?",
        "v[0] + v[1]", "integer",
        [Ref("cases/Pertussis", "New York", "Cases 1950"), Ref("cases/Polio", "New York", "Cases 1950")],
    ),
]  # fmt: skip

DOMAIN = Domain("health", SPLITS, copies, TASKS)

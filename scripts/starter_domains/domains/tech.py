"""Technology, software and manufacturing: car models' specifications, health data breaches reported to HHS,
the US industrial production index; the vcd and zoo vignettes and the Filesystem Hierarchy Standard."""

from __future__ import annotations

from typing import Any

from ..sources import SITE_LIB, Debs, rdata, rdocs
from ..spec import Copy, Domain, Ref, Split, Task
from ..splits import quarter, rotate

CAR_YEARS = [*range(1970, 1981), 1982]  # the data set has no 1981 models
BREACH_YEARS = list(range(2009, 2016))


def cars() -> Any:
    from vega_datasets import local_data

    data = local_data.cars()
    data["year"] = data.Year.dt.year
    return data


def breaches() -> Any:
    br = rdata("Ecdat", "HHSCyberSecurityBreaches")
    br["year"] = br["Breach.Submission.Date"].str[:4].astype(int)
    br["entity"] = br["Name.of.Covered.Entity"].str.strip()
    return br


def production_index() -> Any:
    prod = rdata("AER", "USProdIndex")
    prod["key"] = [quarter(1960 + i / 4) for i in range(len(prod))]
    prod["part"] = ["1960-1975" if i < 64 else "1976-1991" for i in range(len(prod))]
    return prod


SPLITS = [
    Split(
        "cars", cars, "year", CAR_YEARS, "Name",
        [("Miles_per_Gallon", "Miles per gallon", 1), ("Cylinders", "Cylinders", 0),
         ("Displacement", "Displacement (cu in)", 1), ("Horsepower", "Horsepower", 0),
         ("Weight_in_lbs", "Weight (lb)", 0), ("Acceleration", "0-60 mph (s)", 1), ("Origin", "Origin", -1)],
        source="vega-datasets-cars", stem=lambda y: f"car-models-technical-specifications-{y}",
        kind=rotate("csv", "md"), title=lambda y: f"Car models of {y}: technical specifications",
        intro="Technical specifications of car models (vega_datasets cars, from the StatLib auto-mpg data of "
        "Carnegie Mellon University). NA: not reported.", key_label="Model",
    ),
    Split(
        "breaches", breaches, "year", BREACH_YEARS, "entity",
        [("State", "State", -1), ("Covered.Entity.Type", "Entity type", -1),
         ("Individuals.Affected", "Individuals affected", 0), ("Breach.Submission.Date", "Submitted", -1),
         ("Type.of.Breach", "Type of breach", -1), ("Location.of.Breached.Information", "Location", -1)],
        source="ecdat-hhs-cybersecurity-breaches", stem=lambda y: f"health-data-breaches-reported-to-hhs-{y}",
        kind="html", title=lambda y: f"Breaches of unsecured health information reported to HHS, {y}",
        intro="Breaches affecting 500 or more individuals reported to the US Department of Health and Human "
        "Services Office for Civil Rights (Ecdat package, data set HHSCyberSecurityBreaches, which covers the "
        "reports submitted from October 2009 to February 2015).",
        key_label="Covered entity",
    ),
    Split(
        "index", production_index, "part", ["1960-1975", "1976-1991"], "key",
        [("unadjusted", "Index, unadjusted", 1), ("adjusted", "Index, seasonally adjusted", 1)],
        source="aer-usprodindex", stem=lambda p: f"us-industrial-production-index-quarterly-{p}", kind="xlsx",
        title=lambda p: f"US industrial production index, quarterly, {p}",
        intro="Index of US industrial production (1985 = 100), quarterly (AER package, data set USProdIndex, "
        "from Franses 1998; source: OECD).", key_label="Quarter",
    ),
]  # fmt: skip


def copies(debs: Debs) -> list[Copy]:
    fhs = debs.file("debian-policy", "usr/share/doc/debian-policy/fhs/fhs-3.0.pdf.gz")
    return [
        *debs.pdfs("r-cran-vcd", f"{SITE_LIB}/vcd/doc", ["strucplot", "residual-shadings"], "r-cran-vcd-vignettes"),
        *debs.pdfs("r-cran-zoo", f"{SITE_LIB}/zoo/doc", ["zoo-design"], "r-cran-zoo-vignettes"),
        Copy("debian-policy", "filesystem-hierarchy-standard-3.0.pdf", fhs),
        *rdocs([("Ecdat", "HHSCyberSecurityBreaches", "ecdat-hhs-cybersecurity-breaches"),
                ("AER", "USProdIndex", "aer-usprodindex")]),
    ]  # fmt: skip


MPG, AFFECTED, ADJUSTED = "Miles per gallon", "Individuals affected", "Index, seasonally adjusted"
BOSS, COROLLA, ZERO_TO_60 = "ford mustang boss 302", "toyota corolla", "0-60 mph (s)"

TASKS = [
    Task(
        "tech-001",
        "By what percentage did the fuel economy (miles per gallon) of the Honda Civic improve from the 1974 model "
        "to the 1982 model?",
        "(v[1] / v[0] - 1) * 100", "x.xxx%",
        [Ref("cars/1974", "honda civic", MPG), Ref("cars/1982", "honda civic", MPG)],
    ),
    Task(
        "tech-002",
        "What is the ratio of the power-to-weight ratio (horsepower per pound) of the 1970 Ford Mustang Boss 302 to "
        "that of the 1980 Toyota Corolla?",
        "(v[0] / v[1]) / (v[2] / v[3])", "x.xxx x",
        [Ref("cars/1970", BOSS, "Horsepower"), Ref("cars/1970", BOSS, "Weight (lb)"),
         Ref("cars/1980", COROLLA, "Horsepower"), Ref("cars/1980", COROLLA, "Weight (lb)")],
    ),
    Task(
        "tech-003",
        "By what percentage did the total number of individuals affected by health data breaches reported to HHS "
        "change from 2012 to 2013?",
        "(v[1] / v[0] - 1) * 100", "[sign]x.xxx%",
        [Ref("breaches/2012", "*", AFFECTED), Ref("breaches/2013", "*", AFFECTED)],
    ),
    Task(
        "tech-004",
        "How many individuals were affected in total by the health data breaches reported to HHS in 2010 and "
        "2011 together?",
        "v[0] + v[1]", "integer",
        [Ref("breaches/2010", "*", AFFECTED), Ref("breaches/2011", "*", AFFECTED)],
    ),
    Task(
        "tech-005",
        "What was the compound annual growth rate of the seasonally adjusted US industrial production index "
        "between 1970 Q1 and 1985 Q1?",
        "((v[1] / v[0]) ** (D(1) / D(15)) - 1) * 100", "x.xxx%",
        [Ref("index/1960-1975", "1970 Q1", ADJUSTED), Ref("index/1976-1991", "1985 Q1", ADJUSTED)],
    ),
    Task(
        "tech-006",
        "How many seconds longer (negative if shorter; one decimal) did the 1976 Toyota Corolla take to reach 60 mph "
        "than the 1971 Toyota Corolla 1200?",
        "v[0] - v[1]", "[sign]x.x s",
        [Ref("cars/1976", COROLLA, ZERO_TO_60), Ref("cars/1971", "toyota corolla 1200", ZERO_TO_60)],
    ),
]  # fmt: skip

DOMAIN = Domain("tech", SPLITS, copies, TASKS)

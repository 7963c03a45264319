"""Finance and economics: gold and silver spot prices, Argentina's consumer prices (Spanish), a Baa
corporate bond yield, US quarterly macroeconomic series; the sandwich and zoo vignettes."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..sources import SITE_LIB, Debs, rdata
from ..spec import Copy, Domain, Ref, Split, Task, each
from ..splits import month, quarter, quarters, rotate, series

DECADES = ["1950s", "1960s", "1970s", "1980s", "1990s", "2000s"]


def gold_silver() -> Any:
    gs = rdata("AER", "GoldSilver")
    gs["year"] = gs.rownames.str[:4].astype(int)
    return gs


def macrodata() -> Any:
    import statsmodels.api as sm

    macro = sm.datasets.macrodata.load_pandas().data
    macro["key"] = [f"{int(y)} Q{int(q)}" for y, q in zip(macro.year, macro.quarter, strict=True)]
    macro["decade"] = [f"{int(y) // 10 * 10}s" for y in macro.year]
    return macro


SPLITS = [
    Split(
        "metals", gold_silver, "year", list(range(2000, 2012)), "rownames",
        [("gold", "Gold spot price", 2), ("silver", "Silver spot price", 2)],
        source="aer-goldsilver", stem=lambda y: f"gold-and-silver-daily-spot-prices-{y}", kind=rotate("csv", "xlsx"),
        title=lambda y: f"Gold and silver daily spot prices, {y}",
        intro="Daily spot prices of gold and silver (AER package, data set GoldSilver, from Franses, van Dijk and "
        "Opschoor 2014).", key_label="Date",
    ),
    series(
        "cpi", partial(rdata, "AER", "ArgentinaCPI"), quarter, [(1970, 1979), (1980, 1989)],
        ("Índice de precios al consumidor", 2),
        source="aer-argentinacpi", stem=lambda p: f"argentina-indice-de-precios-al-consumidor-trimestral-{p}",
        kind="html", title=lambda p: f"Argentina: índice de precios al consumidor trimestral, {p}",
        intro="Índice de precios al consumidor de Argentina, datos trimestrales (paquete AER, conjunto "
        "ArgentinaCPI, de De Santis 1998). Cifras con coma decimal.", key_label="Trimestre", lang="es",
    ),
    series(
        "bonds", partial(rdata, "AER", "BondYield"), month, [(y, y) for y in range(1990, 1995)], ("Yield (%)", 2),
        source="aer-bondyield", stem=lambda p: f"baa-corporate-bond-yield-monthly-{p[:4]}", kind="md",
        title=lambda p: f"Monthly averages of the yield on a Baa-rated corporate bond, {p[:4]}",
        intro="Moody's Baa corporate bond yield, monthly averages (AER package, data set BondYield, from "
        "Franses 1998).", key_label="Month",
    ),
    Split(
        "us", macrodata, "decade", DECADES, "key",
        [("realgdp", "Real GDP (bn 2005 USD)", 3), ("cpi", "CPI", 3), ("unemp", "Unemployment rate (%)", 1),
         ("tbilrate", "3-month T-bill rate (%)", 2), ("m1", "M1 (bn USD)", 1)],
        source="statsmodels-macrodata", stem=lambda d: f"us-macroeconomic-quarterly-data-{d}", kind="xlsx",
        title=lambda d: f"US macroeconomic quarterly data, {d}",
        intro="US quarterly macroeconomic series (statsmodels data set macrodata; sources: Federal Reserve Bank "
        "of St. Louis FRED, Bureau of Economic Analysis, Bureau of Labor Statistics).", key_label="Quarter",
    ),
]  # fmt: skip


def copies(debs: Debs) -> list[Copy]:
    return [
        *debs.pdfs("r-cran-sandwich", f"{SITE_LIB}/sandwich/doc", ["sandwich"], "r-cran-sandwich-vignettes"),
        *debs.pdfs("r-cran-zoo", f"{SITE_LIB}/zoo/doc", ["zoo", "zoo-quickref"], "r-cran-zoo-vignettes"),
    ]


GOLD, SILVER = "Gold spot price", "Silver spot price"
CPI, YIELD = "Índice de precios al consumidor", "Yield (%)"
GDP, UNEMP = "Real GDP (bn 2005 USD)", "Unemployment rate (%)"

TASKS = [
    Task(
        "fin-001",
        "By what percentage did the gold spot price rise from the first trading day of 2001 (2001-01-01) to the "
        "last trading day of 2011 (2011-12-30)?",
        "(v[1] / v[0] - 1) * 100", "x.xxx%",
        [Ref("metals/2001", "2001-01-01", GOLD), Ref("metals/2011", "2011-12-30", GOLD)],
    ),
    Task(
        "fin-002",
        "How many times larger was the gold-to-silver price ratio on 2005-12-30 than on 2010-12-31?",
        "(v[0] / v[1]) / (v[2] / v[3])", "x.xxx x",
        [Ref("metals/2005", "2005-12-30", GOLD), Ref("metals/2005", "2005-12-30", SILVER),
         Ref("metals/2010", "2010-12-31", GOLD), Ref("metals/2010", "2010-12-31", SILVER)],
    ),
    Task(
        "fin-003",
        "By what factor did Argentina's consumer price index multiply between the fourth quarter of 1975 and the "
        "fourth quarter of 1985?",
        "v[1] / v[0]", "x.xxx x",
        [Ref("cpi/1970-1979", "1975 Q4", CPI), Ref("cpi/1980-1989", "1985 Q4", CPI)],
    ),
    Task(
        "fin-004",
        "By how many percentage points did the Baa corporate bond yield change from January 1990 to December 1994?",
        "v[1] - v[0]", "[sign]x.xx pp",
        [Ref("bonds/1990-1990", "1990-01", YIELD), Ref("bonds/1994-1994", "1994-12", YIELD)],
    ),
    Task(
        "fin-005",
        "What was the compound annual growth rate of US real GDP between 1960 Q1 and 1990 Q1?",
        "((v[1] / v[0]) ** (D(1) / D(30)) - 1) * 100", "x.xxx%",
        [Ref("us/1960s", "1960 Q1", GDP), Ref("us/1990s", "1990 Q1", GDP)],
    ),
    Task(
        "fin-006",
        "By how many percentage points was the average US unemployment rate of the four quarters of 1982 higher "
        "than that of the four quarters of 1975?",
        "(sum(v[:4]) - sum(v[4:])) / 4", "[sign]x.xx pp",
        [*each("us/1980s", quarters(1982), UNEMP), *each("us/1970s", quarters(1975), UNEMP)],
    ),
]  # fmt: skip

DOMAIN = Domain("fin", SPLITS, copies, TASKS)

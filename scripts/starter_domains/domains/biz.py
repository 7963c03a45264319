"""Business, marketing and sales: economics journal prices and subscriptions (with the AER vignettes), US
employment by industry, Australian beer production."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..sources import SITE_LIB, Debs, rdata, rdocs
from ..spec import Copy, Domain, Ref, Split, Task, Text, each
from ..splits import quarter, quarters, series, slug

PUBLISHERS = ["Elsevier", "Blackwell", "Kluwer", "Springer", "Academic Press", "Univ of Chicago Press", "Wiley",
              "Oxford Univ Press"]  # fmt: skip
INDUSTRIES = [("nonfarm", "Total nonfarm"), ("private", "Total private"), ("construction", "Construction"),
              ("manufacturing", "Manufacturing"), ("retail_trade", "Retail trade"), ("information", "Information"),
              ("financial_activities", "Financial activities"),
              ("professional_and_business_services", "Professional and business services"),
              ("leisure_and_hospitality", "Leisure and hospitality"), ("government", "Government")]  # fmt: skip
DECADES = [(1956, 1965), (1966, 1975), (1976, 1985), (1986, 1995), (1996, 2005), (2006, 2010)]


def us_employment() -> Any:
    from vega_datasets import local_data

    emp = local_data.us_employment()
    emp["key"] = emp.month.astype(str).str[:7]
    emp["year"] = emp.key.str[:4].astype(int)
    return emp


SPLITS = [
    Split(
        "journals", partial(rdata, "AER", "Journals"), "publisher", PUBLISHERS, "title",
        [("price", "Library subscription price (USD)", 0), ("pages", "Pages per year", 0),
         ("charpp", "Characters per page", 0), ("citations", "Citations", 0), ("foundingyear", "Founded", 0),
         ("subs", "Library subscriptions", 0), ("field", "Field", -1)],
        source="aer-journals", stem=lambda p: f"economics-journals-price-list-2000-{slug(p)}", kind="xlsx",
        title=lambda p: f"Economics journals published by {p}: prices and subscriptions, 2000",
        intro="Subscription data of economics journals in the year 2000 (AER package, data set Journals, from "
        "Bergstrom 2001).", key_label="Journal",
    ),
    Split(
        "jobs", us_employment, "year", list(range(2006, 2016)), "key", [(c, label, 0) for c, label in INDUSTRIES],
        source="vega-datasets-us-employment", stem=lambda y: f"us-employment-by-industry-{y}", kind="csv",
        title=lambda y: f"US employment by industry, {y}", intro="", key_label="Month",
    ),
    series(
        "beer", partial(rdata, "fpp2", "ausbeer"), quarter, DECADES, ("Beer production (megalitres)", 0),
        source="fpp2-ausbeer", stem=lambda p: f"australia-quarterly-beer-production-{p}", kind="md",
        title=lambda p: f"Australia: quarterly beer production, {p}",
        intro="Total quarterly beer production in Australia, megalitres (fpp2 package, data set ausbeer; source: "
        "Australian Bureau of Statistics).", key_label="Quarter",
    ),
]  # fmt: skip


def copies(debs: Debs) -> list[Copy]:
    return [
        *debs.pdfs("r-cran-aer", f"{SITE_LIB}/AER/doc", ["Sweave-journals", "AER"], "r-cran-aer-vignettes"),
        *rdocs([("AER", "Journals", "aer-journals"), ("fpp2", "ausbeer", "fpp2-ausbeer")]),
    ]


ECONOMETRICS, JPE = "Journal of Econometrics", "Journal of Political Economy"
PRICE, PAGES, SUBS = "Library subscription price (USD)", "Pages per year", "Library subscriptions"
BEER = "Beer production (megalitres)"
VIGNETTE = "r-cran-aer-vignettes_sweave-journals.md"
COEFFICIENTS = r"\(Intercept\) log\(price/citations\)\s+(-?[0-9.]+) (-?[0-9.]+)"  # the intercept, then the slope
SLOPE = r"\(Intercept\) log\(price/citations\)\s+-?[0-9.]+ (-?[0-9.]+)"

TASKS = [
    Task(
        "biz-001",
        "In 2000, how many times higher was the library price per page of the Journal of Econometrics (Elsevier) "
        "than that of the Journal of Political Economy (University of Chicago Press)?",
        "(v[0] / v[1]) / (v[2] / v[3])", "x.xxx x",
        [Ref("journals/Elsevier", ECONOMETRICS, PRICE), Ref("journals/Elsevier", ECONOMETRICS, PAGES),
         Ref("journals/Univ of Chicago Press", JPE, PRICE), Ref("journals/Univ of Chicago Press", JPE, PAGES)],
    ),
    Task(
        "biz-002",
        "By what percentage did US manufacturing employment change from January 2008 to January 2010?",
        "(v[1] / v[0] - 1) * 100", "[sign]x.xxx%",
        [Ref("jobs/2008", "2008-01", "Manufacturing"), Ref("jobs/2010", "2010-01", "Manufacturing")],
    ),
    Task(
        "biz-003",
        "By how many percentage points did construction's share of total US nonfarm employment change from "
        "December 2006 to December 2011?",
        "(v[2] / v[3] - v[0] / v[1]) * 100", "[sign]x.xx pp",
        [Ref("jobs/2006", "2006-12", "Construction"), Ref("jobs/2006", "2006-12", "Total nonfarm"),
         Ref("jobs/2011", "2011-12", "Construction"), Ref("jobs/2011", "2011-12", "Total nonfarm")],
    ),
    Task(
        "biz-004",
        "By what percentage did Australia's annual beer production (four quarters) change from 1975 to 2005?",
        "(sum(v[4:]) / sum(v[:4]) - 1) * 100", "[sign]x.xxx%",
        [*each("beer/1966-1975", quarters(1975), BEER), *each("beer/1996-2005", quarters(2005), BEER)],
    ),
    Task(
        "biz-005",
        "How many library subscriptions did the Journal of Econometrics and the Journal of Political Economy "
        "have together in 2000?",
        "v[0] + v[1]", "integer",
        [Ref("journals/Elsevier", ECONOMETRICS, SUBS), Ref("journals/Univ of Chicago Press", JPE, SUBS)],
    ),
    Task(
        "biz-006",
        "How much higher or lower was the average monthly total US nonfarm employment in 2009 than in 2007, in "
        "thousands of jobs (two decimals)?",
        "(v[0] - v[1]) / 12", "[sign]x.xx",
        [Ref("jobs/2009", "*", "Total nonfarm"), Ref("jobs/2007", "*", "Total nonfarm")],
    ),
    Task(
        "biz-007",
        "The AER package's Journals vignette fits a demand model log(subscriptions) = a + b * log(price / "
        "citations). With its printed coefficients, how many library subscriptions does the model predict for the "
        "Journal of Econometrics at its 2000 price and citations? Two decimals.",
        "(v[0] + v[1] * (v[2] / v[3]).ln()).exp()", "x.xx",
        [Text(VIGNETTE, COEFFICIENTS, "4.766"), Text(VIGNETTE, SLOPE, "-0.533"),
         Ref("journals/Elsevier", ECONOMETRICS, PRICE), Ref("journals/Elsevier", ECONOMETRICS, "Citations")],
    ),
]  # fmt: skip

DOMAIN = Domain("biz", SPLITS, copies, TASKS)

"""Business, marketing and sales: economics journal prices and subscriptions (with the AER vignettes), US
employment by industry, Australian beer production."""

from __future__ import annotations

from typing import Any

from ..domain_file import read_domain
from ..sources import SITE_LIB, Debs, rdocs
from ..spec import Copy


def us_employment() -> Any:
    from vega_datasets import local_data

    emp = local_data.us_employment()
    emp["key"] = emp.month.astype(str).str[:7]
    emp["year"] = emp.key.str[:4].astype(int)
    return emp


def copies(debs: Debs) -> list[Copy]:
    return [
        *debs.pdfs("r-cran-aer", f"{SITE_LIB}/AER/doc", ["Sweave-journals", "AER"], "r-cran-aer-vignettes"),
        *rdocs([("AER", "Journals", "aer-journals"), ("fpp2", "ausbeer", "fpp2-ausbeer")]),
    ]


DOMAIN = read_domain("biz", copies, us_employment)

"""Finance and economics: gold and silver spot prices, Argentina's consumer prices (Spanish), a Baa
corporate bond yield, US quarterly macroeconomic series; the sandwich and zoo vignettes."""

from __future__ import annotations

from typing import Any

from ..domain_file import read_domain
from ..sources import SITE_LIB, Debs, rdata
from ..spec import Copy


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


def copies(debs: Debs) -> list[Copy]:
    return [
        *debs.pdfs("r-cran-sandwich", f"{SITE_LIB}/sandwich/doc", ["sandwich"], "r-cran-sandwich-vignettes"),
        *debs.pdfs("r-cran-zoo", f"{SITE_LIB}/zoo/doc", ["zoo", "zoo-quickref"], "r-cran-zoo-vignettes"),
    ]


DOMAIN = read_domain("fin", copies, gold_silver, macrodata)

"""Technology, software and manufacturing: car models' specifications, health data breaches reported to HHS,
the US industrial production index; the vcd and zoo vignettes and the Filesystem Hierarchy Standard."""

from __future__ import annotations

from typing import Any

from ..domain_file import read_domain
from ..sources import SITE_LIB, Debs, rdata, rdocs
from ..spec import Copy
from ..splits import quarter


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


def copies(debs: Debs) -> list[Copy]:
    fhs = debs.file("debian-policy", "usr/share/doc/debian-policy/fhs/fhs-3.0.pdf.gz")
    return [
        *debs.pdfs("r-cran-vcd", f"{SITE_LIB}/vcd/doc", ["strucplot", "residual-shadings"], "r-cran-vcd-vignettes"),
        *debs.pdfs("r-cran-zoo", f"{SITE_LIB}/zoo/doc", ["zoo-design"], "r-cran-zoo-vignettes"),
        Copy("debian-policy", "filesystem-hierarchy-standard-3.0.pdf", fhs),
        *rdocs(
            [
                ("Ecdat", "HHSCyberSecurityBreaches", "ecdat-hhs-cybersecurity-breaches"),
                ("AER", "USProdIndex", "aer-usprodindex"),
            ]
        ),
    ]


DOMAIN = read_domain("tech", copies, cars, breaches, production_index)

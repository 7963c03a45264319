"""Education and science: California and Massachusetts school districts, Dutch research funding rates by
discipline (NWO), HSAUR3 book chapters."""

from __future__ import annotations

from typing import Any

from ..domain_file import read_domain
from ..sources import SITE_LIB, Debs, rdata, rdocs
from ..spec import Copy

DUTCH = {
    "Chemical sciences": "Chemische wetenschappen",
    "Physical sciences": "Natuurkunde",
    "Physics": "Fysica",
    "Humanities": "Geesteswetenschappen",
    "Technical sciences": "Technische wetenschappen",
    "Interdisciplinary": "Interdisciplinair",
    "Earth/life sciences": "Aard- en levenswetenschappen",
    "Social sciences": "Sociale wetenschappen",
    "Medical sciences": "Medische wetenschappen",
}


def ma_schools() -> Any:
    ma = rdata("AER", "MASchools")
    ma["part"] = ["A-F" if m < "G" else "G-M" if m < "N" else "N-R" if m < "S" else "S-Z" for m in ma.municipality]
    return ma


def funding_rates() -> Any:
    rf = rdata("dslabs", "research_funding_rates")
    rf["discipline_nl"] = [DUTCH[d] for d in rf.discipline]
    rf["doc"] = "all"
    return rf


CHAPTERS = [
    "Ch_introduction_to_R",
    "Ch_simple_inference",
    "Ch_analysis_of_variance",
    "Ch_multiple_linear_regression",
    "Ch_logistic_regression_glm",
    "Ch_meta_analysis",
]


def copies(debs: Debs) -> list[Copy]:
    return [
        *debs.pdfs("r-cran-hsaur3", f"{SITE_LIB}/HSAUR3/doc", CHAPTERS, "r-cran-hsaur3-book-chapters"),
        *rdocs([("AER", "CASchools", "aer-caschools"), ("AER", "MASchools", "aer-maschools")]),
    ]


DOMAIN = read_domain("edu", copies, ma_schools, funding_rates)

"""Education and science: California and Massachusetts school districts, Dutch research funding rates by
discipline (NWO), HSAUR3 book chapters."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..sources import SITE_LIB, Debs, rdata, rdocs
from ..spec import Copy, Domain, Ref, Split, Task
from ..splits import rotate, slug

COUNTIES = ["Sonoma", "Kern", "Los Angeles", "Tulare", "San Diego", "Santa Clara", "San Mateo", "Humboldt",
            "Shasta", "Fresno", "Merced", "Santa Barbara", "Orange", "Placer"]  # fmt: skip
PARTS = ["A-F", "G-M", "N-R", "S-Z"]
DUTCH = {
    "Chemical sciences": "Chemische wetenschappen", "Physical sciences": "Natuurkunde", "Physics": "Fysica",
    "Humanities": "Geesteswetenschappen", "Technical sciences": "Technische wetenschappen",
    "Interdisciplinary": "Interdisciplinair", "Earth/life sciences": "Aard- en levenswetenschappen",
    "Social sciences": "Sociale wetenschappen", "Medical sciences": "Medische wetenschappen",
}  # fmt: skip


def ma_schools() -> Any:
    ma = rdata("AER", "MASchools")
    ma["part"] = ["A-F" if m < "G" else "G-M" if m < "N" else "N-R" if m < "S" else "S-Z" for m in ma.municipality]
    return ma


def funding_rates() -> Any:
    rf = rdata("dslabs", "research_funding_rates")
    rf["discipline_nl"] = [DUTCH[d] for d in rf.discipline]
    rf["doc"] = "all"
    return rf


SPLITS = [
    Split(
        "ca", partial(rdata, "AER", "CASchools"), "county", COUNTIES, "school",
        [("district", "District code", 0), ("grades", "Grade span", -1), ("students", "Students", 0),
         ("teachers", "Teachers (FTE)", 2), ("lunch", "Free or reduced-price lunch (%)", 2),
         ("english", "English learners (%)", 2), ("expenditure", "Expenditure per student (USD)", 2),
         ("read", "Average reading score", 1), ("math", "Average math score", 1)],
        source="aer-caschools", stem=lambda c: f"california-school-districts-{slug(c)}-county-1998-1999",
        kind=rotate("csv", "xlsx"), title=lambda c: f"California test score data: {c} County, 1998-1999",
        intro="California Standardized Testing and Reporting (STAR) results for K-6 and K-8 districts (AER "
        "package, data set CASchools; source: California Department of Education).", key_label="School",
    ),
    Split(
        "ma", ma_schools, "part", PARTS, "municipality",
        [("exptot", "Expenditure per pupil (USD)", 0), ("stratio", "Students per teacher", 1),
         ("lunch", "Free or reduced-price lunch (%)", 1), ("score4", "Grade 4 score", 0),
         ("score8", "Grade 8 score", 0)],
        source="aer-maschools", stem=lambda pt: f"massachusetts-school-districts-1997-1998-{pt.lower()}", kind="md",
        title=lambda pt: f"Massachusetts school districts {pt}: spending and test scores, 1997-1998",
        intro="Massachusetts Comprehensive Assessment System results and district spending (AER package, data set "
        "MASchools; source: Massachusetts Department of Education). NA: not reported.", key_label="Municipality",
    ),
    Split(
        "nwo-counts", funding_rates, "doc", ["all"], "discipline_nl",
        [("applications_total", "Aanvragen totaal", 0), ("applications_men", "Aanvragen mannen", 0),
         ("applications_women", "Aanvragen vrouwen", 0), ("awards_total", "Toekenningen totaal", 0),
         ("awards_men", "Toekenningen mannen", 0), ("awards_women", "Toekenningen vrouwen", 0)],
        source="dslabs-research-funding-rates", stem=lambda _: "nwo-aanvragen-en-toekenningen-per-discipline",
        kind="html", title=lambda _: "NWO Vernieuwingsimpuls: aanvragen en toekenningen per discipline",
        intro="Aanvragen en toekenningen van onderzoeksfinanciering bij NWO per discipline en geslacht (Van der Lee "
        "en Ellemers 2015, PNAS; dataset research_funding_rates van het R-pakket dslabs).",
        key_label="Discipline", lang="nl",
    ),
    Split(
        "nwo-rates", funding_rates, "doc", ["all"], "discipline_nl",
        [("success_rates_total", "Slagingspercentage totaal (%)", 1),
         ("success_rates_men", "Slagingspercentage mannen (%)", 1),
         ("success_rates_women", "Slagingspercentage vrouwen (%)", 1)],
        source="dslabs-research-funding-rates", stem=lambda _: "nwo-slagingspercentages-per-discipline",
        kind="md", title=lambda _: "NWO Vernieuwingsimpuls: slagingspercentages per discipline",
        intro="Slagingspercentages (toekenningen als percentage van de aanvragen) per discipline en geslacht, "
        "met decimale komma (bron: Van der Lee en Ellemers 2015, PNAS; R-pakket dslabs).",
        key_label="Discipline", lang="nl",
    ),
]  # fmt: skip

CHAPTERS = ["Ch_introduction_to_R", "Ch_simple_inference", "Ch_analysis_of_variance",
            "Ch_multiple_linear_regression", "Ch_logistic_regression_glm", "Ch_meta_analysis"]  # fmt: skip


def copies(debs: Debs) -> list[Copy]:
    return [
        *debs.pdfs("r-cran-hsaur3", f"{SITE_LIB}/HSAUR3/doc", CHAPTERS, "r-cran-hsaur3-book-chapters"),
        *rdocs([("AER", "CASchools", "aer-caschools"), ("AER", "MASchools", "aer-maschools")]),
    ]


LENNOX, VINELAND = "Lennox Elementary", "Vineland Elementary"
TEACHERS, MATH, EXPENDITURE = "Teachers (FTE)", "Average math score", "Expenditure per pupil (USD)"
MEDICAL = "Medische wetenschappen"

TASKS = [
    Task(
        "edu-001",
        "How many more students per full-time teacher did Lennox Elementary (Los Angeles County) have than "
        "Vineland Elementary (Kern County)? Give the difference with two decimals.",
        "v[0] / v[1] - v[2] / v[3]", "[sign]x.xx",
        [Ref("ca/Los Angeles", LENNOX, "Students"), Ref("ca/Los Angeles", LENNOX, TEACHERS),
         Ref("ca/Kern", VINELAND, "Students"), Ref("ca/Kern", VINELAND, TEACHERS)],
    ),
    Task(
        "edu-002",
        "What is the average of the math scores of Lennox Elementary (Los Angeles County) and Lost Hills Union "
        "Elementary (Kern County)? Two decimals.",
        "(v[0] + v[1]) / 2", "x.xx",
        [Ref("ca/Los Angeles", LENNOX, MATH), Ref("ca/Kern", "Lost Hills Union Elementary", MATH)],
    ),
    Task(
        "edu-003",
        "In 1997-1998, how many times higher was the expenditure per pupil in Cambridge than in Worcester "
        "(Massachusetts)?",
        "v[0] / v[1]", "x.xxx x",
        [Ref("ma/A-F", "Cambridge", EXPENDITURE), Ref("ma/S-Z", "Worcester", EXPENDITURE)],
    ),
    Task(
        "edu-004",
        "For Medical sciences, compute the women's success rate from the numbers of applications and awards, and "
        "give how many percentage points it lies above or below the published total success rate.",
        "v[0] / v[1] * 100 - v[2]", "[sign]x.xx pp",
        [Ref("nwo-counts/all", MEDICAL, "Toekenningen vrouwen"), Ref("nwo-counts/all", MEDICAL, "Aanvragen vrouwen"),
         Ref("nwo-rates/all", MEDICAL, "Slagingspercentage totaal (%)")],
    ),
    Task(
        "edu-005",
        "How many students were enrolled in Lennox Elementary (Los Angeles County) and Vineland Elementary (Kern "
        "County) together?",
        "v[0] + v[1]", "integer",
        [Ref("ca/Los Angeles", LENNOX, "Students"), Ref("ca/Kern", VINELAND, "Students")],
    ),
    Task(
        "edu-006",
        "By what percentage was the expenditure per student of Lennox Elementary (California, 1998-1999) higher "
        "or lower than the expenditure per pupil of Boston (Massachusetts, 1997-1998), relative to Boston?",
        "(v[0] / v[1] - 1) * 100", "[sign]x.xxx%",
        [Ref("ca/Los Angeles", LENNOX, "Expenditure per student (USD)"), Ref("ma/A-F", "Boston", EXPENDITURE)],
    ),
]  # fmt: skip

DOMAIN = Domain("edu", SPLITS, copies, TASKS)

"""Law: US traffic fatalities and drunk driving laws, crime and shall-carry laws, Spanish state crime
statistics; the Debian constitution and social contract, the Debian Policy Manual and licence texts."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..sources import DEBIAN, Debs, rdata, rdocs
from ..spec import Copy, Domain, Ref, Split, Task
from ..splits import slug

US_STATES = {
    "al": "Alabama", "az": "Arizona", "ca": "California", "fl": "Florida", "ga": "Georgia", "il": "Illinois",
    "ma": "Massachusetts", "mi": "Michigan", "ny": "New York", "oh": "Ohio", "pa": "Pennsylvania", "tx": "Texas",
}  # fmt: skip


def fatalities() -> Any:
    fat = rdata("AER", "Fatalities")
    fat["jail"] = fat["jail"].astype(str)
    fat["service"] = fat["service"].astype(str)
    return fat


def state_crime() -> Any:
    import statsmodels.api as sm

    crime = sm.datasets.statecrime.load_pandas().data.reset_index()
    crime["half"] = ["A-M" if s < "N" else "N-W" for s in crime.state]
    return crime


SPLITS = [
    Split(
        "fatal", fatalities, "state", list(US_STATES), "year",
        [("fatal", "Traffic fatalities", 0), ("pop", "Population", 0), ("beertax", "Beer tax (USD per case)", 4),
         ("drinkage", "Minimum legal drinking age", 2), ("jail", "Mandatory jail sentence", -1),
         ("service", "Mandatory community service", -1), ("unemp", "Unemployment rate (%)", 1)],
        source="aer-fatalities",
        stem=lambda s: f"traffic-fatalities-and-drunk-driving-laws-{slug(US_STATES[s])}-1982-1988",
        kind="csv", title=lambda s: f"{US_STATES[s]}: traffic fatalities and drunk driving laws, 1982-1988",
        intro="US traffic fatalities panel (AER package, data set Fatalities; sources: US Department of "
        "Transportation Fatal Accident Reporting System, US Bureau of Labor Statistics).",
        key_label="Year",
    ),
    Split(
        "guns", partial(rdata, "AER", "Guns"), "year", [1977, 1980, 1985, 1990, 1993, 1995, 1999], "state",
        [("violent", "Violent crime rate (per 100,000)", 1), ("murder", "Murder rate (per 100,000)", 1),
         ("robbery", "Robbery rate (per 100,000)", 1), ("prisoners", "Incarceration rate (per 100,000)", 0),
         ("population", "Population (millions)", 3), ("law", "Shall-carry law in effect", -1)],
        source="aer-guns", stem=lambda y: f"crime-rates-and-shall-carry-laws-by-state-{y}",
        kind="xlsx", title=lambda y: f"Crime rates and shall-carry laws by state, {y}",
        intro="More Guns, Less Crime? panel of the 50 US states and the District of Columbia (AER package, data "
        "set Guns; sources: FBI Uniform Crime Reports, Bureau of Justice Statistics, US Census).",
        key_label="State",
    ),
    Split(
        "crime", state_crime, "half", ["A-M", "N-W"], "state",
        [("violent", "Delitos violentos por 100.000 habitantes", 1), ("murder", "Asesinatos por 100.000 habitantes", 1),
         ("hs_grad", "Graduados de secundaria (%)", 1), ("poverty", "Población bajo el umbral de pobreza (%)", 1),
         ("urban", "Población urbana (%)", 2)],
        source="statsmodels-statecrime", stem=lambda h: f"delincuencia-y-pobreza-por-estado-2009-estados-{h.lower()}",
        kind="html", title=lambda h: f"Delincuencia y pobreza por estado, Estados Unidos 2009 (estados {h})",
        intro="Estadísticas estatales de 2009 (conjunto de datos statecrime de statsmodels; fuentes: FBI Uniform "
        "Crime Reports y US Census Bureau, American Community Survey). Cifras con coma decimal.",
        key_label="Estado", lang="es",
    ),
]  # fmt: skip

DOC_DEBIAN = "usr/share/doc/debian/"


def copies(debs: Debs) -> list[Copy]:
    versions = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8"]
    texts = [(f"constitution.{v}.txt.gz", f"debian-constitution-v{v}.txt") for v in versions]
    texts += [("constitution.txt.gz", "debian-constitution-current.txt"),
              ("social-contract.txt.gz", "debian-social-contract-current.txt"),
              ("social-contract.1.0.txt.gz", "debian-social-contract-v1.0.txt")]  # fmt: skip
    policy = debs.file("debian-policy", "usr/share/doc/debian-policy/policy.pdf.gz")
    licences = ["GPL-2", "GPL-3", "LGPL-2.1", "Apache-2.0", "MPL-2.0", "Artistic", "BSD", "CC0-1.0"]
    return [
        *rdocs([("AER", "Fatalities", "aer-fatalities"), ("AER", "Guns", "aer-guns")]),
        *(Copy("debian-governance", out, debs.file("doc-debian", DOC_DEBIAN + name)) for name, out in texts),
        Copy("debian-policy", f"debian-policy-manual-{DEBIAN['debian-policy']}.pdf", policy),
        *(Copy("debian-common-licenses", f"licence-{name}.txt",
               debs.file("base-files", f"usr/share/common-licenses/{name}")) for name in licences),
    ]  # fmt: skip


FATAL, POP, UNEMP = "Traffic fatalities", "Population", "Unemployment rate (%)"
MURDER, PRISON, POPM = "Murder rate (per 100,000)", "Incarceration rate (per 100,000)", "Population (millions)"
VIOLENT, VIOLENT_ES = "Violent crime rate (per 100,000)", "Delitos violentos por 100.000 habitantes"
POVERTY = "Población bajo el umbral de pobreza (%)"

TASKS = [
    Task(
        "law-001",
        "Between 1982 and 1988, traffic fatalities changed in Texas and in California. By how many percentage "
        "points did Texas's percentage change exceed California's?",
        "(v[1] / v[0] - v[3] / v[2]) * 100", "[sign]x.xx pp",
        [Ref("fatal/tx", "1982", FATAL), Ref("fatal/tx", "1988", FATAL),
         Ref("fatal/ca", "1982", FATAL), Ref("fatal/ca", "1988", FATAL)],
    ),
    Task(
        "law-002",
        "In 1988, how many times higher was Georgia's traffic fatality rate per inhabitant than Massachusetts's?",
        "(v[0] / v[1]) / (v[2] / v[3])", "x.xxx x",
        [Ref("fatal/ga", "1988", FATAL), Ref("fatal/ga", "1988", POP),
         Ref("fatal/ma", "1988", FATAL), Ref("fatal/ma", "1988", POP)],
    ),
    Task(
        "law-003",
        "By what percentage did New York's murder rate per 100,000 inhabitants change between 1977 and 1999?",
        "(v[1] / v[0] - 1) * 100", "[sign]x.xxx%",
        [Ref("guns/1977", "New York", MURDER), Ref("guns/1999", "New York", MURDER)],
    ),
    Task(
        "law-004",
        "Using each year's incarceration rate and population, how many more people were incarcerated in "
        "California in 1999 than in 1985? Round to a whole number.",
        "v[2] * v[3] * 10 - v[0] * v[1] * 10", "integer",
        [Ref("guns/1985", "California", PRISON), Ref("guns/1985", "California", POPM),
         Ref("guns/1999", "California", PRISON), Ref("guns/1999", "California", POPM)],
    ),
    Task(
        "law-005",
        "By what percentage did Florida's violent crime rate per 100,000 inhabitants change from 1999 to 2009?",
        "(v[1] / v[0] - 1) * 100", "[sign]x.xxx%",
        [Ref("guns/1999", "Florida", VIOLENT), Ref("crime/A-M", "Florida", VIOLENT_ES)],
    ),
    Task(
        "law-006",
        "In 2009, by how many percentage points did the share of the population below the poverty line in "
        "Texas exceed that in California?",
        "v[0] - v[1]", "[sign]x.xx pp",
        [Ref("crime/N-W", "Texas", POVERTY), Ref("crime/A-M", "California", POVERTY)],
    ),
    Task(
        "law-007",
        "What was the average unemployment rate (in %) of Michigan, Ohio and Pennsylvania in 1983, as a plain "
        "number with two decimals?",
        "sum(v) / 3", "x.xx",
        [Ref("fatal/mi", "1983", UNEMP), Ref("fatal/oh", "1983", UNEMP), Ref("fatal/pa", "1983", UNEMP)],
    ),
]  # fmt: skip

DOMAIN = Domain("law", SPLITS, copies, TASKS)

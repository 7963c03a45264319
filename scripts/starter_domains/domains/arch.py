"""Architecture, construction and real estate: Texas housing market by city, Australian cement production
(Spanish), house sales in Windsor, Ontario."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..sources import Debs, rdata, rdocs
from ..spec import Copy, Domain, Ref, Split, Task, each
from ..splits import months, quarter, quarters, rotate, series, slug

CITIES = ["Austin", "Dallas", "Houston", "San Antonio", "El Paso", "Fort Worth", "Lubbock", "Corpus Christi",
          "Arlington", "Amarillo", "Waco", "Tyler", "Beaumont", "Abilene", "Killeen-Fort Hood", "Laredo"]  # fmt: skip
DECADES = [(1956, 1965), (1966, 1975), (1976, 1985), (1986, 1995), (1996, 2005), (2006, 2014)]


def txhousing() -> Any:
    tx = rdata("ggplot2", "txhousing")
    tx["key"] = [f"{int(y)}-{int(m):02d}" for y, m in zip(tx.year, tx.month, strict=True)]
    return tx


def house_prices() -> Any:
    hp = rdata("AER", "HousePrices")
    hp["id"] = [f"House {i}" for i in hp.rownames]
    return hp


SPLITS = [
    Split(
        "tx", txhousing, "city", CITIES, "key",
        [("sales", "Sales", 0), ("volume", "Dollar volume (USD)", 0), ("median", "Median price (USD)", 0),
         ("listings", "Active listings", 0), ("inventory", "Months of inventory", 1)],
        source="ggplot2-txhousing", stem=lambda c: f"texas-housing-market-{slug(c)}-2000-2015",
        kind=rotate("csv", "xlsx"), title=lambda c: f"Texas housing market: {c}, monthly, 2000-2015",
        intro="Monthly home sales by city from the TAMU Real Estate Center (ggplot2 package, data set "
        "txhousing). NA: not reported.", key_label="Month",
    ),
    series(
        "cement", partial(rdata, "fpp2", "qcement"), quarter, DECADES,
        ("Producción de cemento (millones de toneladas)", 3),
        source="fpp2-qcement", stem=lambda p: f"produccion-trimestral-de-cemento-australia-{p}", kind="html",
        title=lambda p: f"Australia: producción trimestral de cemento portland, {p}",
        intro="Producción total trimestral de cemento portland en Australia, en millones de toneladas (paquete "
        "fpp2, conjunto qcement; fuente: Oficina Australiana de Estadística). Cifras con coma decimal.",
        key_label="Trimestre", lang="es",
    ),
    Split(
        "windsor", house_prices, "stories", [1, 2, 3, 4], "id",
        [("price", "Sale price (CAD)", 0), ("lotsize", "Lot size (sq ft)", 0), ("bedrooms", "Bedrooms", 0),
         ("bathrooms", "Bathrooms", 0), ("garage", "Garage places", 0), ("aircon", "Air conditioning", -1)],
        source="aer-houseprices", stem=lambda k: f"windsor-ontario-house-sales-1987-{k}-storey-houses", kind="md",
        title=lambda k: f"House sales in Windsor, Ontario, 1987: {k}-storey houses",
        intro="Sales prices of houses sold in Windsor, Canada, July-September 1987 (AER package, data set "
        "HousePrices, from Anglin and Gencay 1996).", key_label="House",
    ),
]  # fmt: skip


def copies(debs: Debs) -> list[Copy]:
    return rdocs([("ggplot2", "txhousing", "ggplot2-txhousing"), ("fpp2", "qcement", "fpp2-qcement"),
                  ("AER", "HousePrices", "aer-houseprices")])  # fmt: skip


MEDIAN, LISTINGS, INVENTORY = "Median price (USD)", "Active listings", "Months of inventory"
CEMENT, PRICE = "Producción de cemento (millones de toneladas)", "Sale price (CAD)"

TASKS = [
    Task(
        "arch-001",
        "How many times more homes were sold in Houston than in Dallas over the calendar year 2014?",
        "sum(v[:12]) / sum(v[12:])", "x.xxx x",
        [*each("tx/Houston", months(2014), "Sales"), *each("tx/Dallas", months(2014), "Sales")],
    ),
    Task(
        "arch-002",
        "In June 2015, by what percentage was the median home price in Austin above the one in San Antonio?",
        "(v[0] / v[1] - 1) * 100", "x.xxx%",
        [Ref("tx/Austin", "2015-06", MEDIAN), Ref("tx/San Antonio", "2015-06", MEDIAN)],
    ),
    Task(
        "arch-003",
        "By what percentage did Australia's annual Portland cement production (four quarters) grow from 1970 "
        "to 2010?",
        "(sum(v[4:]) / sum(v[:4]) - 1) * 100", "x.xxx%",
        [*each("cement/1966-1975", quarters(1970), CEMENT), *each("cement/2006-2014", quarters(2010), CEMENT)],
    ),
    Task(
        "arch-004",
        "What was the compound annual growth rate of Australia's quarterly cement production between the first "
        "quarter of 1960 and the first quarter of 2010?",
        "((v[1] / v[0]) ** (D(1) / D(50)) - 1) * 100", "x.xxx%",
        [Ref("cement/1956-1965", "1960 Q1", CEMENT), Ref("cement/2006-2014", "2010 Q1", CEMENT)],
    ),
    Task(
        "arch-005",
        "How many active home listings did El Paso and Lubbock have together in December 2010?",
        "v[0] + v[1]", "integer",
        [Ref("tx/El Paso", "2010-12", LISTINGS), Ref("tx/Lubbock", "2010-12", LISTINGS)],
    ),
    Task(
        "arch-006",
        "In December 2012, how many more months of inventory did the Houston housing market have than Austin's? "
        "Give the difference with its sign and one decimal.",
        "v[0] - v[1]", "[sign]x.x months",
        [Ref("tx/Houston", "2012-12", INVENTORY), Ref("tx/Austin", "2012-12", INVENTORY)],
    ),
    Task(
        "arch-007",
        "What was the average sale price of all two-storey houses in the Windsor 1987 sample minus the average "
        "sale price of all one-storey houses, in Canadian dollars with two decimals?",
        "v[0] / 238 - v[1] / 227", "[sign]x.xx CAD",  # the sample's 238 two-storey and 227 one-storey houses
        [Ref("windsor/2", "*", PRICE), Ref("windsor/1", "*", PRICE)],
    ),
]  # fmt: skip

DOMAIN = Domain("arch", SPLITS, copies, TASKS)

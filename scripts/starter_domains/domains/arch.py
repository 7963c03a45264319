"""Architecture, construction and real estate: Texas housing market by city, Australian cement production
(Spanish), house sales in Windsor, Ontario."""

from __future__ import annotations

from typing import Any

from ..domain_file import read_domain
from ..sources import Debs, rdata, rdocs
from ..spec import Copy


def txhousing() -> Any:
    tx = rdata("ggplot2", "txhousing")
    tx["key"] = [f"{int(y)}-{int(m):02d}" for y, m in zip(tx.year, tx.month, strict=True)]
    return tx


def house_prices() -> Any:
    hp = rdata("AER", "HousePrices")
    hp["id"] = [f"House {i}" for i in hp.rownames]
    return hp


def copies(debs: Debs) -> list[Copy]:
    return rdocs(
        [
            ("ggplot2", "txhousing", "ggplot2-txhousing"),
            ("fpp2", "qcement", "fpp2-qcement"),
            ("AER", "HousePrices", "aer-houseprices"),
        ]
    )


DOMAIN = read_domain("arch", copies, txhousing, house_prices)

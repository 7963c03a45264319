"""What a retrieval back end held for a run and what it cost (File Search's vector stores, billed per GB a day):
written to run.yaml's `retrieval_stores` at the run's end, when the run deletes or keeps them, and read by the
report's storage section."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class StoreUse:
    """One store at the run's end: its size and age then, its estimated cost, deleted or kept."""

    store_id: str
    collection: str
    """The collection's folder name."""
    bytes: int
    """The store's `usage_bytes`, what storage is billed on."""
    held_s: float
    """Seconds from its creation to the run's end."""
    usd_per_gb_day: float
    """The list price the estimate used."""
    estimated_usd: float
    """bytes / 1e9 × usd_per_gb_day × held_s / 86 400 (an account's free first GB is not seen)."""
    kept: bool
    """Kept for the next run (`keep_store=true`), else deleted with its files."""

    @classmethod
    def priced(
        cls, store_id: str, collection: str, size: int, held_s: float, usd_per_gb_day: float, kept: bool
    ) -> StoreUse:
        return cls(
            store_id, collection, size, held_s, usd_per_gb_day, size / 1e9 * usd_per_gb_day * held_s / 86_400, kept
        )

    def said(self) -> str:
        """The line the run prints of it."""
        held = f"{self.bytes} bytes for {self.held_s / 3600:.1f} h"
        price = f"~${self.estimated_usd:.3g} at ${self.usd_per_gb_day} a GB-day"
        if self.kept:
            return (
                f"kept File Search store {self.store_id} of {self.collection} ({held} so far: {price}; "
                f"`python -m harness collection delete-store {self.collection}` deletes it)"
            )
        return (
            f"deleted File Search store {self.store_id} of {self.collection} ({held}: {price}; "
            "--solver-arg keep_store=true keeps it)"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StoreUse:
        return cls(
            store_id=str(data["store_id"]),
            collection=str(data["collection"]),
            bytes=int(data["bytes"]),
            held_s=float(data["held_s"]),
            usd_per_gb_day=float(data["usd_per_gb_day"]),
            estimated_usd=float(data["estimated_usd"]),
            kept=bool(data["kept"]),
        )

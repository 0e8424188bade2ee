"""`provider: static`: machines that exist now, listed in an inventory file.

    provider: static
    inventory: lab.yaml        # relative to this file

acquire validates the inventory (every problem, FILE:LINE) and hands it on unchanged;
release has nothing to give back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.cluster import bounds
from orchestrator.cluster.load import load_inventory
from orchestrator.cluster.providers.base import Provider, Reservation


class StaticConf(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Literal["static"]
    inventory: Annotated[str, Field(min_length=1, max_length=bounds.MAX_PATH_CHARS)]


class StaticProvider(Provider):
    name = "static"
    Conf = StaticConf

    def acquire(self, out_dir: Path) -> Reservation:
        path = Path(self.conf.inventory)
        path = path if path.is_absolute() else (self.base / path).resolve()
        load_inventory(path)  # SpecError naming the inventory's lines
        return Reservation(self.name, str(path))

    def release(self, reservation: Reservation) -> None:
        return None

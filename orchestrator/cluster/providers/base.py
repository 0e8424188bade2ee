"""The provider seam: one interface, one file per provider, one provider file format.

A provider file is YAML with `provider: NAME` and that provider's fields, validated like
a spec (FILE:LINE: path: reason, unknown keys refused, every size bounded). `acquire`
returns a `Reservation`: the inventory it wrote (loaded back through `load_inventory`, so
a provider can never hand on an inventory a user could not have written) and what
`release` needs, saved as DIR/reservation.json so another process can release it.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from orchestrator.cluster.load import read_text_file
from orchestrator.spec import guard
from orchestrator.spec.loader import load_yaml
from orchestrator.spec.problems import from_validation_error
from xcplab_contract.errors import SpecError, SpecProblem, XcplabError

MAX_PROVIDER_BYTES = 64 * 1024


@dataclass
class Reservation:
    provider: str
    inventory: str                     # the inventory file acquire wrote or checked
    record: dict[str, Any] = field(default_factory=dict)  # what release needs (job ids)

    def save(self, out_dir: Path) -> Path:
        path = out_dir / "reservation.json"
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")
        return path

    @classmethod
    def load(cls, out_dir: Path) -> Reservation:
        path = out_dir / "reservation.json"
        try:
            return cls(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError) as e:
            raise XcplabError(f"{path}: not a reservation written by `xcplab cluster "
                              f"acquire` ({e})") from e


class Provider(ABC):
    name: ClassVar[str]
    Conf: ClassVar[type[BaseModel]]

    def __init__(self, conf: Any, file: str, base: Path) -> None:
        self.conf = conf
        self.file = file    # the provider file, for messages
        self.base = base    # its directory: relative paths in it are relative to it

    @abstractmethod
    def acquire(self, out_dir: Path) -> Reservation:
        """The machines, as an inventory in out_dir (or the user's own, for static)."""

    @abstractmethod
    def release(self, reservation: Reservation) -> None:
        """Give back what acquire took; idempotent."""


def _registry() -> dict[str, type[Provider]]:
    from orchestrator.cluster.providers.g5k import G5kProvider
    from orchestrator.cluster.providers.static import StaticProvider

    return {p.name: p for p in (StaticProvider, G5kProvider)}


def parse_provider(text: str, file: str, base: Path) -> Provider:
    try:
        guard.check_size(text, MAX_PROVIDER_BYTES, "the provider file")
    except guard.ShapeError as e:
        raise SpecError([SpecProblem(file, e.line, "(yaml)", e.reason)]) from None
    data, lines = load_yaml(text, file)
    registry = _registry()
    kind = data.get("provider") if isinstance(data, dict) else None
    if kind not in registry:
        raise SpecError([lines.problem(("provider",), f"{kind!r} is not a provider: one of "
                                       f"{', '.join(sorted(registry))}")])
    cls = registry[kind]
    try:
        conf = cls.Conf.model_validate(data)
    except ValidationError as e:
        raise SpecError(from_validation_error(e, data, lines, cls.Conf)) from None
    return cls(conf, file, base)


def load_provider(path: str | Path) -> Provider:
    return parse_provider(read_text_file(path), str(path), Path(path).resolve().parent)


def release(out_dir: Path, provider_file: str | Path) -> Reservation:
    """Release the reservation acquire saved in out_dir."""
    res = Reservation.load(out_dir)
    prov = load_provider(provider_file)
    if prov.name != res.provider:
        raise XcplabError(f"{out_dir}/reservation.json is a {res.provider} reservation, "
                          f"{provider_file} a {prov.name} provider")
    prov.release(res)
    return res


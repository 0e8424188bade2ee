"""Queue disciplines in the spec: one typed model per kind, one file per kind.

Written flat: `queue: {kind: red, min_th: 5, max_th: 15}` or just `queue: xcp`. Every
module of this package is imported here, and each kind's model registers itself
(base.py), so `QueueSpec` (the field type of every `queue:`), `KINDS` and the JSON
Schema follow the files present: a new kind is a new file here and its engine file in
router-image/src/qdisc/, with no list to edit. What the kinds differ in is asked of the
model (`xcp_feedback`, `colour`, `link_id_param`, `router_options()`), not of its name.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import BeforeValidator, Discriminator, GetJsonSchemaHandler, Tag
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from orchestrator.spec.queues.base import REGISTRY, QueueModel, QueueOption

for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")

# Without `queue:` anywhere, routers run this (resolve.py, when.py, trial.py ask here).
DEFAULT_KIND = "droptail"
KINDS: tuple[str, ...] = tuple(sorted(REGISTRY))


def queue_model(kind: str) -> type[QueueModel]:
    """The model of `kind`; KeyError names the kinds there are."""
    try:
        return REGISTRY[kind]
    except KeyError:
        raise KeyError(f"unknown queue kind {kind!r}; valid: {', '.join(KINDS)}") from None


def _shorthand(v: Any) -> Any:
    return {"kind": v} if isinstance(v, str) else v


def _kind_of(v: Any) -> str | None:
    kind = v.get("kind") if isinstance(v, dict) else getattr(v, "kind", None)
    return kind if isinstance(kind, str) else None


def is_queue_spec(metadata: list[Any]) -> bool:
    """Whether a field's Annotated metadata is QueueSpec's (for walkers of the models)."""
    return any(isinstance(m, _Schema) for m in metadata)


class _Schema:
    """JSON Schema: a kind's name alone, or one of the kinds' objects."""

    @staticmethod
    def __get_pydantic_json_schema__(core: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {"anyOf": [{"type": "string", "enum": list(KINDS),
                           "description": "queue kind with default parameters"},
                          handler(core)]}


if TYPE_CHECKING:  # to mypy a queue is its base model; the union is built at import
    QueueSpec = QueueModel
else:
    QueueSpec = Annotated[
        Union[tuple(Annotated[REGISTRY[k], Tag(k)] for k in KINDS)],
        Discriminator(_kind_of),
        BeforeValidator(_shorthand),
        _Schema(),
    ]

__all__ = ["DEFAULT_KIND", "KINDS", "QueueModel", "QueueOption", "QueueSpec", "is_queue_spec",
           "queue_model"]

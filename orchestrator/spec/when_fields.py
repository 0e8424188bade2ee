"""What a `when:` path names: the spec field it reaches and how its values are read.

A path is the `--set`/`--param` path (orchestrator.spec.overrides.parse_path):
dotted keys, `[N]` indices, `[ID]` list items by id (links without an id are
`<a>-<b>`). The walk follows the pydantic models, so a path is valid exactly when
`--set` could write a value there, and the field's own type says how a condition's
value is parsed (its `kind`).
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from types import NoneType, UnionType
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from orchestrator import units
from orchestrator.spec.models import LossSpec, Spec
from orchestrator.spec.overrides import parse_path
from orchestrator.spec.queues import KINDS, is_queue_spec

Kind = Literal["rate", "duration", "size", "buffer", "probability", "loss", "queue", "bool",
               "number", "string"]
ORDERED_KINDS = ("rate", "duration", "size", "buffer", "probability", "loss", "number")
_BY_PARSER = {units.parse_rate: "rate", units.parse_duration: "duration",
              units.parse_size: "size", units.parse_buffer: "buffer",
              units.parse_probability: "probability"}


@dataclass(frozen=True)
class Target:
    """The field a path reaches in one spec, and where it sits (for effective values)."""

    kind: Kind
    choices: tuple[str, ...]  # valid strings of a Literal (or queue kinds); () = any
    value: Any  # as written (after --set); None when not written
    link: int | None = None  # spec links[] index when the path is a link's parameter
    direction: str | None = None  # a_to_b / b_to_a when the path goes through one
    flow: int | None = None  # spec flows[] index when the path is a flow's parameter
    node: str | None = None  # nodes.<name> when the path is a node's queue
    key: str = ""  # the last key (the field's name)
    parts: list[Any] = field(default_factory=list)


def _unwrap(ann: Any, metadata: list[Any]) -> tuple[Any, list[Any]]:
    """Optional[X] -> X; Annotated[X, m...] -> X with m added to metadata."""
    while True:
        origin = get_origin(ann)
        if origin in (typing.Union, UnionType):
            args = [a for a in get_args(ann) if a is not NoneType]
            if len(args) != 1:
                return ann, metadata
            ann = args[0]
        elif origin is typing.Annotated:
            metadata = [*metadata, *ann.__metadata__]
            ann = get_args(ann)[0]
        else:
            return ann, metadata


def _kind(ann: Any, metadata: list[Any]) -> tuple[Kind, tuple[str, ...]] | None:
    """The kind of a leaf field, or None if it is a container (model, list, dict)."""
    for m in metadata:
        func = getattr(m, "func", None)
        if func in _BY_PARSER:
            return _BY_PARSER[func], ()  # type: ignore[return-value]
    if ann is LossSpec:
        return "loss", ()
    if is_queue_spec(metadata):
        return "queue", KINDS
    if ann is bool:
        return "bool", ()
    if ann in (int, float):
        return "number", ()
    if ann is str:
        return "string", ()
    if get_origin(ann) is Literal:
        return "string", tuple(str(a) for a in get_args(ann))
    return None


def _item_id(item: Any) -> str | None:
    """The `[ID]` of a list item, as `--set` names it (overrides._item_id)."""
    if getattr(item, "id", None) is not None:
        return str(item.id)
    if getattr(item, "a", None) is not None and getattr(item, "b", None) is not None:
        return f"{item.a}-{item.b}"
    return None


def find_target(spec: Spec, text: str) -> Target:
    """Walk `text` through the models and this spec; ValueError says what is valid."""
    parts = parse_path(text)
    ann: Any = Spec
    meta: list[Any] = []
    value: Any = spec
    where: dict[str, Any] = {}
    walked = ""
    for i, part in enumerate(parts):
        ann, meta = _unwrap(ann, meta)
        if isinstance(part, str):
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                fields = ann.model_fields
                if part not in fields:
                    raise ValueError(f"{walked or '(top)'} has no key {part!r}; valid keys: "
                                     f"{', '.join(fields)}")
                ann, meta = fields[part].annotation, list(fields[part].metadata)
                value = getattr(value, part) if value is not None else None
            elif get_origin(ann) is dict:
                names = list(value) if isinstance(value, dict) else []
                if part not in names:
                    raise ValueError(f"no {part!r} in {walked} ({', '.join(names) or 'none'})")
                ann, meta = get_args(ann)[1], []
                value = value[part]
                if walked == "nodes":
                    where["node"] = part
            elif get_origin(ann) is list:
                raise ValueError(f"{walked} is a list: choose an item with [N] or [ID], e.g. "
                                 f"{walked}[{part}]")
            else:
                raise ValueError(f"{walked} is a single value: {part!r} cannot follow it")
            if walked.count(".") == 0 and walked.startswith("links[") and part in (
                    "a_to_b", "b_to_a"):
                where["direction"] = part
            walked += ("." if walked else "") + part
        else:
            if get_origin(ann) is not list:
                raise ValueError(f"{walked or '(top)'} is not a list: [..] cannot follow it")
            items = list(value or [])
            if isinstance(part, tuple):
                ids = [_item_id(x) for x in items]
                if part[0] not in ids:
                    raise ValueError(f"no item with id {part[0]!r} in {walked} (ids: "
                                     f"{', '.join(x for x in ids if x) or 'none'})")
                index = ids.index(part[0])
            elif -len(items) <= part < len(items):
                index = part % len(items)
            else:
                raise ValueError(f"{walked} has no item [{part}] ({len(items)} items)")
            if walked in ("links", "flows"):
                where[walked[:-1]] = index
            ann, meta, value = get_args(ann)[0], [], items[index]
            walked += f"[{part[0] if isinstance(part, tuple) else part}]"
        if i == len(parts) - 1:
            ann, meta = _unwrap(ann, meta)
            kind = _kind(ann, meta)
            if kind is None:
                raise ValueError(f"{walked} holds more than one value; name one of its "
                                 f"fields, e.g. {_example(ann, walked)}")
            return Target(kind=kind[0], choices=kind[1], value=value,
                          key=part if isinstance(part, str) else "", parts=parts, **where)
    raise ValueError("empty path")  # parse_path never returns []


def _example(ann: Any, walked: str) -> str:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return f"{walked}.{next(iter(ann.model_fields))}"
    return f"{walked}[0]"

"""Frozen dataclasses <-> JSON-ready data, guided by type hints (no pickle, no magic).

Tuples become lists and back; Optional fields accept null; unknown keys are
errors so a plan written by a newer xcplab is not silently misread. A value class
that is not a dataclass (plan.QueueParams) converts itself: `to_data()` and the
classmethod `from_data(data)`.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from xcplab_contract.errors import PlanError

_FIELDS: dict[type, tuple[str, ...]] = {}


def to_data(obj: Any) -> Any:
    names = _FIELDS.get(type(obj))
    if names is None and is_dataclass(obj) and not isinstance(obj, type):
        names = _FIELDS[type(obj)] = tuple(f.name for f in fields(obj))
    if names is not None:
        return {n: to_data(getattr(obj, n)) for n in names}
    if isinstance(obj, tuple | list):
        return [to_data(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): to_data(v) for k, v in obj.items()}
    if obj is None or isinstance(obj, str | int | float):
        return obj
    convert = getattr(obj, "to_data", None)
    return convert() if callable(convert) else obj


_HINTS: dict[type, dict[str, Any]] = {}


def from_data(tp: Any, data: Any) -> Any:
    origin = get_origin(tp)
    if origin in (Union, UnionType):
        args = [a for a in get_args(tp) if a is not NoneType]
        if data is None:
            return None
        return from_data(args[0], data) if len(args) == 1 else data
    if origin is tuple:
        (item, _ellipsis) = get_args(tp)
        return tuple(from_data(item, x) for x in data)
    if isinstance(tp, type) and not is_dataclass(tp) and hasattr(tp, "from_data"):
        return tp.from_data(data)
    if isinstance(tp, type) and is_dataclass(tp):
        hints = _HINTS.get(tp)
        if hints is None:
            hints = _HINTS[tp] = get_type_hints(tp)
        names = {f.name for f in fields(tp)}
        unknown = set(data) - names
        if unknown:
            raise PlanError(f"{tp.__name__}: unknown keys {sorted(unknown)}")
        return tp(**{k: from_data(hints[k], v) for k, v in data.items()})
    return data

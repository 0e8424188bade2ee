"""What every queue kind's model is: a frozen pydantic model of its spec fields, each
field marked with the engine param it becomes and the row of the shared bound table
(xcplab_contract/bounds.json) that bounds it.

A kind registers itself by subclassing `QueueModel` with a `kind: Literal["name"]`
field; the package imports every module beside this one, so a new kind is a new file
here (and its engine file in router-image/src/qdisc/), with no list to edit.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, model_validator

from orchestrator.spec.queues.ns2 import Ns2Queue, Ns2Refused
from xcplab_contract.bounds import Bound, bound
from xcplab_contract.plan import ParamValue, Queue, QueueParams

REGISTRY: dict[str, type[QueueModel]] = {}


@dataclass(frozen=True)
class Param:
    """Field metadata: the engine param (router-image/QUEUES.md) a spec field becomes,
    the bound-table row it must lie in, whether it follows the spec's `scale`, and where
    it goes: "port" = the queue's `params`; "router" = the kind's router-level object
    (CONFIG.md, e.g. `xcpi`), "router.<sub>" = a sub-object of it."""

    engine: str
    bound: str | None = None
    scaled: bool = False
    at: str = "port"


def param(engine: str, bound_name: str | None = None, *, scaled: bool = False,
          at: str = "port") -> Param:
    if bound_name is not None:
        bound(bound_name)  # a typo fails at import, not at the first spec using it
    return Param(engine, bound_name, scaled, at)


@functools.cache  # a class's fields do not change; asked per field per direction
def _param_of(model: type[BaseModel], name: str) -> Param | None:
    return next((m for m in model.model_fields[name].metadata if isinstance(m, Param)), None)


class QueueModel(BaseModel):
    """Base of the per-kind models. Left-out fields take the engine's defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    # Planner and tools ask the kind, not a list of kind names:
    xcp_feedback: ClassVar[bool] = False  # its routers give XCP feedback (plan lint)
    colour: ClassVar[str] = "#bdbdbd"  # `xcplab plan --graph`
    description: ClassVar[str] = ""
    # the engine param a kind takes its direction's link id in (iXCP), filled by the planner
    link_id_param: ClassVar[str | None] = None
    # how the kind maps onto ns-2.35 (ns2.py); read from the class itself, not inherited
    ns2: ClassVar[Ns2Queue | Ns2Refused | None] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kw: Any) -> None:
        super().__pydantic_init_subclass__(**kw)
        REGISTRY[cls.kind_name()] = cls

    @model_validator(mode="before")
    @classmethod
    def _own_fields_only(cls, v: Any) -> Any:
        """One message for a field of another kind, naming this kind's fields."""
        if isinstance(v, dict):
            foreign = sorted(str(k) for k in v if k not in cls.model_fields)
            if foreign:
                mine = [n for n in cls.model_fields if n != "kind"]
                raise ValueError(f"not parameters of queue kind {v.get('kind')}: "
                                 f"{', '.join(foreign)}; its parameters: "
                                 f"{', '.join(mine) or 'none'}")
        return v

    @classmethod
    def fields(cls) -> list[str]:
        return [n for n in cls.model_fields if n != "kind"]

    @classmethod
    def kind_name(cls) -> str:
        (kind,) = get_args(cls.model_fields["kind"].annotation)
        return str(kind)

    @classmethod
    def plan_queue(cls, params: Mapping[str, ParamValue], limit_packets: int,
                   limit_bytes: int, link_id: int | None = None) -> Queue:
        """The plan's queue of this kind (xcplab_contract.plan.Queue): the engine params
        this model gave at resolution (`engine_params`), then the link id of the
        direction when the kind takes one (`link_id_param`)."""
        out = QueueParams(params)
        if link_id is not None and cls.link_id_param is not None:
            out = out.with_param(cls.link_id_param, link_id)
        return Queue(kind=cls.kind_name(), limit_packets=limit_packets,
                     limit_bytes=limit_bytes, params=out)

    @classmethod
    def ns2_mapping(cls) -> Ns2Queue | Ns2Refused:
        """What this kind declares about ns-2.35 itself; a kind that declares nothing
        (a derived one included: it does not inherit its base's) is refused by name."""
        own = vars(cls).get("ns2")
        if isinstance(own, Ns2Queue | Ns2Refused):
            return own
        return Ns2Refused(f"queue kind {cls.kind_name()}")

    def bounded(self, scale: float) -> Iterator[tuple[tuple[str, ...], float, Bound]]:
        """(field path, value as the engine gets it, its bound) for every field given,
        options' fields included."""
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, QueueOption):
                yield from (((name, *path), v, b) for path, v, b in value.bounded())
                continue
            p = _param_of(type(self), name)
            if p is not None and p.bound is not None and value is not None:
                yield (name,), self._scaled(value, p, scale), bound(p.bound)

    @staticmethod
    def _scaled(value: Any, p: Param, scale: float) -> Any:
        return max(1, round(value * scale)) if p.scaled else value

    def engine_params(self, scale: float) -> dict[str, Any]:
        """QUEUES.md `params` of this queue: every given field under its engine name,
        then the options' params."""
        out: dict[str, Any] = {}
        options: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, QueueOption):
                options.update(value.engine_params())
                continue
            p = _param_of(type(self), name)
            if p is not None and p.at == "port" and value is not None:
                out[p.engine] = self._scaled(value, p, scale)
        return {**out, **options}

    def router_options(self) -> dict[str, Any] | None:
        """The router-level engine object of this kind (CONFIG.md; e.g. `xcpi`) from its
        fields at "router"/"router.<sub>", or None when the kind has none."""
        if not any(p.at != "port" for name in type(self).model_fields
                   if (p := _param_of(type(self), name)) is not None):
            return None
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            p = _param_of(type(self), name)
            value = getattr(self, name)
            if p is None or p.at == "port" or value is None:
                continue
            sub = p.at.partition(".")[2]
            (out.setdefault(sub, {}) if sub else out)[p.engine] = value
        return out


class QueueOption(BaseModel):
    """An option of several kinds, as its own model (e.g. the XCP-TCP fairness dropper):
    its fields carry `Param` like a kind's and add to the kind's engine params."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def bounded(self) -> Iterator[tuple[tuple[str, ...], float, Bound]]:
        for name in type(self).model_fields:
            p = _param_of(type(self), name)
            value = getattr(self, name)
            if p is not None and p.bound is not None and value is not None:
                yield (name,), value, bound(p.bound)

    def engine_params(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            p = _param_of(type(self), name)
            value = getattr(self, name)
            if p is not None and value is not None:
                out[p.engine] = value
        return out

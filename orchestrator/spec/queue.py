"""Queue disciplines in the spec, with typed parameters per kind (router-image/QUEUES.md).

Written flat: `queue: {kind: red, min_th: 5, max_th: 15}` or just `queue: xcp`.
Quantities take units (`capacity: 25Mbps`, `min_interval: 1ms`) and become the
engine's `params` (`capacity_bps`, `min_interval_s`). Parameters not given are
left to the engine's defaults. `params:` passes raw engine params through
(merged last) for knobs this schema does not know yet.

XCP-i, iXCP and the XCP-TCP fairness dropper slot in by adding their kind to
`QueueKind` and their fields to `KIND_FIELDS`; the fairness dropper is an option of the
XCP-family kinds: `queue: {kind: xcp, tcp_fairness: true}` (FAIRNESS_FIELDS). `ixcp`
takes XCP's fields; its per-port link ids are the planner's (orchestrator/plan/ixcp.py).
"""

from __future__ import annotations

import typing
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from orchestrator.spec.types import Duration, Rate

QueueKind = Literal["droptail", "red", "xcp", "xcpi", "ixcp"]

# spec field -> engine param name, per kind.
KIND_FIELDS: dict[str, dict[str, str]] = {
    "droptail": {},
    "red": {"min_th": "min_th", "max_th": "max_th", "max_p": "max_p", "w_q": "w_q",
            "gentle": "gentle", "thresh_unit": "thresh_unit",
            "mean_packet_bytes": "mean_packet_bytes"},
    "xcp": {"capacity": "capacity_bps", "alpha": "alpha", "beta": "beta", "gamma": "gamma",
            "fallback_interval": "fallback_interval_s", "min_interval": "min_interval_s",
            "max_interval": "max_interval_s", "rtt_cap": "rtt_cap_s",
            "min_queue_window": "min_queue_window_s"},
}
# An XCP-i router's ports run the XCP port law: the same engine params.
KIND_FIELDS["xcpi"] = dict(KIND_FIELDS["xcp"])
# iXCP (docs/protocol.md §5) changes the port law, not its knobs: XCP's params; the planner
# adds each port's `link_id` (orchestrator/plan/ixcp.py).
KIND_FIELDS["ixcp"] = dict(KIND_FIELDS["xcp"])

# XCP-i options (docs/protocol.md §4) are the router's, not a port's: they go to the engine
# config's router-level `xcpi` object (router-image/CONFIG.md), not to queue params.
# spec field -> engine key; durations become seconds.
XCPI_FIELDS: dict[str, str] = {
    "estimator": "estimator", "request_timeout": "request_timeout_s",
    "request_attempts": "request_attempts", "reestimate_period": "reestimate_period_s",
    "broken_holdoff": "broken_holdoff_s", "idle_timeout": "idle_timeout_s",
    "estimate_max_age": "estimate_max_age_s", "max_upstreams": "max_upstreams",
    "chirps_per_request": "chirps_per_request", "cloud_queue": "cloud_queue"}
# Oracle options: its own sub-object in the engine config.
XCPI_ORACLE_FIELDS: dict[str, str] = {"estimate_error": "error", "estimate_period": "period_s"}
# Chirp probing options (router-image/XCPI_ESTIMATOR.md): the engine's `chirp` object.
XCPI_CHIRP_FIELDS: dict[str, str] = {"probe_overhead": "overhead", "probe_size": "packet_bytes"}
# XCP-TCP fairness dropper (docs/protocol.md §6, seed 004) on XCP-family queues: the
# `tcp_fairness:` object's fields -> the engine's flat queue params (QUEUES.md "xcp").
FAIRNESS_KINDS = ("xcp", "xcpi", "ixcp")
FAIRNESS_FIELDS: dict[str, str] = {
    "zombie_entries": "fairness_zombie_entries", "delta": "fairness_delta",
    "replacement": "fairness_replacement", "inspect": "fairness_inspect",
    "p_drop_start": "fairness_p_drop_start", "d_drop": "fairness_d_drop",
    "i_drop": "fairness_i_drop", "threshold": "fairness_threshold",
    "update": "fairness_update", "window": "fairness_window_s"}


class TcpFairnessSpec(BaseModel):
    """`tcp_fairness: true` or `tcp_fairness: {inspect: 0.5, ...}`: seed 004's dropper.

    Left-out fields take the engine's defaults, which are the paper's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    zombie_entries: int | None = Field(default=None, ge=1, le=100_000)
    delta: float | None = Field(default=None, gt=0, le=1)
    replacement: float | None = Field(default=None, ge=0, le=1)
    inspect: float | None = Field(default=None, gt=0, le=1)
    p_drop_start: float | None = Field(default=None, gt=0, le=1)
    d_drop: float | None = Field(default=None, ge=0.5, le=1)
    i_drop: float | None = Field(default=None, ge=1, le=2)
    threshold: float | None = Field(default=None, ge=0, le=2)
    update: Literal["tcp_packet", "interval"] | None = None
    window: Duration | None = Field(default=None, ge=0, le=10)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, v: Any) -> Any:
        return {"enabled": v} if isinstance(v, bool) else v

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        full = handler.resolve_ref_schema(handler(core))
        return {"anyOf": [{"type": "boolean", "description": "on (true) with the paper's "
                           "defaults, or off"}, full]}

    def engine_params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tcp_fairness": self.enabled}
        for name, key in FAIRNESS_FIELDS.items():
            if getattr(self, name) is not None:
                out[key] = getattr(self, name)
        return out


class QueueSpec(BaseModel):
    """`queue: xcp` or `queue: {kind: red, max_p: 0.05}`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: QueueKind
    # red
    min_th: float | None = Field(default=None, ge=0)
    max_th: float | None = Field(default=None, gt=0)
    max_p: float | None = Field(default=None, gt=0, le=1)
    w_q: float | None = Field(default=None, gt=0, le=1)
    gentle: bool | None = None
    thresh_unit: Literal["packets", "bytes"] | None = None
    mean_packet_bytes: int | None = Field(default=None, ge=1, le=65535)
    # xcp
    capacity: Rate | None = None  # the controller's C when it must differ from the link's
    alpha: float | None = Field(default=None, ge=0, le=10)
    beta: float | None = Field(default=None, ge=0, le=10)
    gamma: float | None = Field(default=None, ge=0, le=1)
    fallback_interval: Duration | None = None
    min_interval: Duration | None = None
    max_interval: Duration | None = None
    rtt_cap: Duration | None = None
    min_queue_window: Duration | None = None
    # xcpi (router-level; XCPI_FIELDS)
    estimator: Literal["oracle", "chirp"] | None = None
    estimate_error: float | None = Field(default=None, ge=0, le=0.9)
    estimate_period: Duration | None = Field(default=None, ge=0, le=600)
    request_timeout: Duration | None = Field(default=None, ge=0.001, le=600)
    request_attempts: int | None = Field(default=None, ge=1, le=100)
    reestimate_period: Duration | None = Field(default=None, ge=0.001, le=600)
    broken_holdoff: Duration | None = Field(default=None, ge=0.001, le=600)
    idle_timeout: Duration | None = Field(default=None, ge=0.001, le=600)
    estimate_max_age: Duration | None = Field(default=None, ge=0.001, le=600)
    max_upstreams: int | None = Field(default=None, ge=1, le=4096)
    chirps_per_request: int | None = Field(default=None, ge=1, le=1000)
    probe_overhead: float | None = Field(default=None, ge=0.001, le=0.5)
    cloud_queue: bool | None = None
    probe_size: int | None = Field(default=None, ge=100, le=1500)
    # xcp, xcpi, ixcp: XCP-TCP fairness dropper (FAIRNESS_FIELDS)
    tcp_fairness: TcpFairnessSpec | None = None
    # raw engine params, merged last
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, v: Any) -> Any:
        return {"kind": v} if isinstance(v, str) else v

    @model_validator(mode="after")
    def _fields_of_kind(self) -> QueueSpec:
        mine = dict(KIND_FIELDS[self.kind])
        if self.kind == "xcpi":
            mine.update(XCPI_FIELDS)
            mine.update(XCPI_ORACLE_FIELDS)
            mine.update(XCPI_CHIRP_FIELDS)
        every = [*(n for fields in KIND_FIELDS.values() for n in fields), *XCPI_FIELDS,
                 *XCPI_ORACLE_FIELDS, *XCPI_CHIRP_FIELDS]
        foreign = [name for name in every if name not in mine and getattr(self, name) is not None]
        if self.tcp_fairness is not None and self.kind not in FAIRNESS_KINDS:
            foreign.append("tcp_fairness")
        elif self.kind in FAIRNESS_KINDS:
            mine["tcp_fairness"] = "tcp_fairness"
        if foreign:
            valid = ", ".join(mine) or "none besides params"
            raise ValueError(f"not parameters of queue kind {self.kind}: "
                             f"{', '.join(sorted(set(foreign)))}; its parameters: {valid}")
        if self.min_th is not None and self.max_th is not None and self.max_th <= self.min_th:
            raise ValueError("max_th must be greater than min_th")
        lo, hi = self.min_interval, self.max_interval
        if lo is not None and hi is not None and lo > hi:
            raise ValueError("min_interval must be at most max_interval")
        return self

    def xcpi_options(self) -> dict[str, Any] | None:
        """The engine's router-level `xcpi` object (CONFIG.md), without the oracle's
        paths, which the planner adds; None unless this is an XCP-i queue."""
        if self.kind != "xcpi":
            return None
        def given(fields: dict[str, str]) -> dict[str, Any]:
            return {key: getattr(self, name) for name, key in fields.items()
                    if getattr(self, name) is not None}

        out = given(XCPI_FIELDS)
        for sub, fields in (("oracle", XCPI_ORACLE_FIELDS), ("chirp", XCPI_CHIRP_FIELDS)):
            if part := given(fields):
                out[sub] = part
        return out

    def engine_params(self, scale: float) -> dict[str, Any]:
        """QUEUES.md `params` for this kind; the XCP capacity follows `scale`."""
        out: dict[str, Any] = {}
        for name, engine_name in KIND_FIELDS[self.kind].items():
            value = getattr(self, name)
            if value is None:
                continue
            if name == "capacity":
                value = max(1, round(value * scale))
            out[engine_name] = value
        if self.tcp_fairness is not None:
            out.update(self.tcp_fairness.engine_params())
        out.update(self.params)
        return out

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        full = handler.resolve_ref_schema(handler(core))
        return {"anyOf": [{"type": "string", "enum": list(typing.get_args(QueueKind)),
                           "description": "queue kind with default parameters"}, full]}

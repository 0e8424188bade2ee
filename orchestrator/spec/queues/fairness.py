"""`tcp_fairness: true` or `tcp_fairness: {inspect: 0.5, ...}`: the XCP-TCP fairness
dropper of seed 004 (docs/protocol.md §6), an option of the XCP-family kinds (a field of
XcpQueue, so every kind derived from it takes it). Its fields become the engine's flat
`tcp_fairness`/`fairness_*` queue params (QUEUES.md "xcp"); left-out fields take the
engine's defaults, which are the paper's."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from orchestrator.spec.queues.base import QueueOption, param
from orchestrator.spec.types import Duration


class TcpFairnessSpec(QueueOption):
    enabled: Annotated[bool, param("tcp_fairness")] = True
    zombie_entries: Annotated[int | None,
                              param("fairness_zombie_entries", "fairness.zombie_entries")] = None
    delta: Annotated[float | None, param("fairness_delta", "fairness.delta")] = None
    replacement: Annotated[float | None,
                           param("fairness_replacement", "fairness.replacement")] = None
    inspect: Annotated[float | None, param("fairness_inspect", "fairness.inspect")] = None
    p_drop_start: Annotated[float | None,
                            param("fairness_p_drop_start", "fairness.p_drop_start")] = None
    d_drop: Annotated[float | None, param("fairness_d_drop", "fairness.d_drop")] = None
    i_drop: Annotated[float | None, param("fairness_i_drop", "fairness.i_drop")] = None
    threshold: Annotated[float | None, param("fairness_threshold", "fairness.threshold")] = None
    update: Annotated[Literal["tcp_packet", "interval"] | None, param("fairness_update")] = None
    window: Annotated[Duration | None, param("fairness_window_s", "fairness.window_s")] = None

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

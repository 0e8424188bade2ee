"""The resolved spec: every default applied, `scale` applied, numbers in SI units.

This is `resolved.json` in a run directory, the planner's input and the
analysis' view of what was asked for. Field names carry units (`_bps`, `_s`).
Scaled quantities (capacities, packet/byte buffers, flow rates) are stored
after scaling; `scale` records the factor.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator import units
from orchestrator.spec.apps import RApp
from orchestrator.spec.captures import RCapture
from orchestrator.spec.trial_models import RTrial
from xcplab_contract.plan import ParamValue


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RQueue(Frozen):
    """A direction's or router's queue as its kind's model resolved it (`resolved_queue`):
    the kind's engine params after `scale` (the model's `engine_params`), which the
    model turns into the plan's queue (`plan_queue`)."""

    kind: str
    params: dict[str, ParamValue] = Field(default_factory=dict)
    # XCP-i routers only: the router-level options (QueueModel.router_options)
    xcpi: dict[str, Any] | None = None


class RLoss(Frozen):
    model: Literal["none", "bernoulli", "gilbert_elliott"] = "none"
    p: float = 0.0
    r: float = 0.0
    loss_bad: float = 1.0
    loss_good: float = 0.0


class RBuffer(Frozen):
    unit: Literal["packets", "bytes", "bdp"]
    value: float

    def __str__(self) -> str:
        return str(units.Buffer(self.unit, self.value))


class RDirection(Frozen):
    capacity_bps: int
    delay_s: float
    buffer: RBuffer
    loss: RLoss
    queue: RQueue
    up: bool = True


class RLink(Frozen):
    id: str
    a: str
    b: str
    a_to_b: RDirection
    b_to_a: RDirection


class RNode(Frozen):
    name: str
    role: Literal["host", "router"]
    queue: RQueue | None = None  # routers
    # nodes.NAME.limits (orchestrator/spec/node_limits.py); None: not limited
    cpuset: str | None = None
    memory_bytes: int | None = None
    io: Literal["kernel", "xdp"] = "kernel"  # hosts: orchestrator/spec/host_io.py


class RFlow(Frozen):
    id: str
    proto: Literal["xcp", "newreno", "hstcp", "tcp", "udp"]
    cc: str | None  # tcp only
    src: str
    dst: str
    start_s: float
    stop_s: float | None  # None when size-limited
    size_bytes: int | None
    parallel: int
    rate_bps: int | None
    port: int
    recovery: Literal["sack", "newreno", "reno"] = "sack"
    delayed_ack: bool = True  # false: the receiver ACKs every segment (xcpperf --no-delayed-ack)
    rto_backoff: Literal["sample", "new_data"] = "sample"  # xcpperf --rto-backoff
    xcp_feedback: Literal["all_acks", "new_acks"] = "all_acks"  # xcpperf --xcp-feedback
    # Web-like short flows (xcpperf --objects): (start offset from the flow's start in
    # s, bytes) per object in start order, and the connections open at once.
    objects: list[tuple[float, int]] | None = None
    max_concurrent: int | None = None
    # A command pair over the XCP socket stack (orchestrator/spec/apps.py), as written.
    app: RApp | None = None

    @property
    def tool(self) -> Literal["xcpperf", "iperf3", "app"]:
        if self.app is not None:
            return "app"
        return "iperf3" if self.proto in ("tcp", "udp") else "xcpperf"


class RLinkChange(Frozen):
    """Link parameters changed by an event (None = unchanged)."""

    capacity_bps: int | None = None
    delay_s: float | None = None
    buffer: RBuffer | None = None
    loss: RLoss | None = None
    up: bool | None = None


class REvent(Frozen):
    """A link event (flow starts/stops live on the flows)."""

    t_s: float
    action: Literal["set_link", "link_down", "link_up"]
    link: str
    direction: Literal["a_to_b", "b_to_a", "both"] = "both"
    change: RLinkChange
    note: str | None = None


class RWindow(Frozen):
    start: float = 0.0  # seconds from the start of the run
    stop: float | None = None  # None = end of run


class RCheck(Frozen):
    """An expectation; `value` in SI units (see orchestrator.spec.models.Check)."""

    name: str
    metric: str
    flow: str | None = None
    flows: list[str] | None = None
    link: str | None = None
    direction: Literal["a_to_b", "b_to_a"] | None = None
    op: Literal[">=", "<=", ">", "<", "=="]
    value: float
    relative_to: Literal["capacity"] | None = None
    window: RWindow | None = None  # None = the whole run
    settle: float | None = None  # maxmin_error: seconds unjudged after each change
    paper: str | None = None
    when: list[str] = Field(default_factory=list)  # conditions as written ("path op value")
    skip: str | None = None  # why a condition does not hold for this run (None = applies)
    not_reproduced: str | None = None  # why xcplab does not reproduce the paper's number


class ResolvedSpec(Frozen):
    name: str
    description: str | None = None
    duration_s: float
    seed: int
    metrics_interval_s: float
    scale: float
    nodes: list[RNode]
    links: list[RLink]
    flows: list[RFlow]
    timeline: list[REvent]
    expect: list[RCheck]
    captures: list[RCapture] = Field(default_factory=list)  # one per captured direction
    trial: RTrial | None = None  # a trial's generated topology and deployment choice

    def node(self, name: str) -> RNode:
        return next(n for n in self.nodes if n.name == name)

    def link(self, link_id: str) -> RLink:
        return next(x for x in self.links if x.id == link_id)

    def flow(self, flow_id: str) -> RFlow:
        return next(f for f in self.flows if f.id == flow_id)

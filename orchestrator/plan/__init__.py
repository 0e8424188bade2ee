"""Spec -> plan: addressing, MACs, routes, engine configs, flows, timeline (pure)."""

from orchestrator.plan.model import (
    ControlCommand,
    Direction,
    Endpoint,
    Event,
    Flow,
    Interface,
    Link,
    Loss,
    Neighbour,
    Node,
    Plan,
    Queue,
    Route,
)

__all__ = [
    "ControlCommand", "Direction", "Endpoint", "Event", "Flow", "Interface", "Link", "Loss",
    "Neighbour", "Node", "Plan", "Queue", "Route",
]

"""Plan model: JSON round trip and naming rules."""

from __future__ import annotations

import pytest

from xcplab_contract import naming
from xcplab_contract.errors import PlanError
from xcplab_contract.plan import (
    ControlCommand,
    Direction,
    Endpoint,
    Event,
    Flow,
    Interface,
    Link,
    Loss,
    Node,
    Plan,
    Queue,
    QueueParams,
    Route,
)


def _tiny_plan() -> Plan:
    q = Queue("xcp", 0, 150_000, QueueParams({"capacity_bps": 25_000_000}))
    d = Direction("r1", "r2", 30_000_000, 10_000, q, Loss("bernoulli", p=0.01), True,
                  "r1", "r1:eth1", "egress", 0.08, 300_000)
    e = Endpoint("r1", "eth1", "02:00:00:00:01:01", "10.0.1.1/24")
    link = Link("r1-r2", e, e, "10.0.1.0/24", d, d)
    node = Node("r1", "router", "xcplab-abc123-r1",
                (Interface("eth0", "r1-r2", "r2", "02:00:00:00:01:01", "10.0.1.1/24",
                           "xcplab-abc123:r1:r1-r2", "02:00:00:00:01:02", "10.0.1.2"),),
                (Route("0.0.0.0/0", "10.0.1.2", "eth0"),), (), {"name": "r1", "ports": []})
    flow = Flow("f1", "tcp", "cubic", "iperf3", "h1", "h2", "10.0.0.2", "10.0.2.2", 5201,
                0.0, None, 1_000_000, 2, None, ("h1", "r1", "h2"), 0.1,
                ("iperf3", "-s"), ("iperf3", "-c", "10.0.2.2"))
    ev = Event(1.0, "set_link", "r1-r2", {"capacity_bps": 1_000_000},
               (ControlCommand("r1", {"cmd": "set_link", "router": "r1"}),))
    return Plan("x", "run-1", "abc123", 7, 20.0, 0.1, 1.0, (node,), (link,), (flow,), (ev,))


def test_json_round_trip_is_equal() -> None:
    plan = _tiny_plan()
    again = Plan.from_json(plan.to_json())
    assert again == plan
    assert isinstance(again.flows[0].path, tuple)
    assert again.links[0].a_to_b.loss.p == 0.01


def test_unknown_key_and_format_rejected() -> None:
    data = _tiny_plan().to_dict()
    data["nodes"][0]["bogus"] = 1
    with pytest.raises(PlanError, match="bogus"):  # the error root, not a bare ValueError
        Plan.from_dict(data)
    data = _tiny_plan().to_dict()
    data["format"] = 99
    with pytest.raises(PlanError, match="format 99"):
        Plan.from_dict(data)


def test_queue_params_are_frozen_scalars_in_the_order_given() -> None:
    plan = Plan.from_json(_tiny_plan().to_json())
    params = plan.links[0].a_to_b.queue.params
    assert isinstance(params, QueueParams) and params == {"capacity_bps": 25_000_000}
    with pytest.raises(TypeError):
        params["alpha"] = 0.5  # type: ignore[index]
    ordered = QueueParams({"b": 1, "a": True}).with_param("c", "x")
    assert list(ordered) == ["b", "a", "c"]
    assert Queue("red", 10, 0, ordered).to_engine()["params"] == {"b": 1, "a": True, "c": "x"}
    assert hash(QueueParams({"a": 1})) == hash(QueueParams({"a": 1}))


def test_a_queue_param_that_is_not_a_scalar_is_refused_naming_it() -> None:
    data = _tiny_plan().to_dict()
    data["links"][0]["a_to_b"]["queue"]["params"] = {"alpha": [0.4]}
    with pytest.raises(PlanError, match="alpha must be a number"):
        Plan.from_dict(data)
    data["links"][0]["a_to_b"]["queue"]["params"] = [["alpha", 0.4]]
    with pytest.raises(PlanError, match="queue params must be a JSON object"):
        Plan.from_dict(data)


def test_run_tag_is_short_stable_and_base36() -> None:
    t = naming.run_tag("20261121-195000-quickstart")
    assert t == naming.run_tag("20261121-195000-quickstart")
    assert len(t) == 6 and t.isalnum() and t.lower() == t
    assert t != naming.run_tag("20261121-195001-quickstart")


def test_gilbert_elliott_mean_loss() -> None:
    ge = Loss("gilbert_elliott", p=0.01, r=0.3, loss_bad=1.0, loss_good=0.0)
    assert ge.mean() == pytest.approx(0.01 / 0.31)


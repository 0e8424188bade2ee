"""iXCP (docs/protocol.md §5) in the spec and the plan: `queue: ixcp` takes XCP's params,
every ixcp direction carries a seeded, distinct, nonzero `link_id`, and each XCP
sender starts from the id of the first iXCP direction on its path
(orchestrator/plan/ixcp.py)."""

from __future__ import annotations

import itertools

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import SpecError

# Low's topology behind a DropTail first hop: a -> r0 -> r1 (155) -> r2 (100) -> d.
SPEC = """
name: low
seed: {seed}
duration: 5s
nodes:
  a: {{role: host}}
  b: {{role: host}}
  r0: {{role: router}}
  r1: {{role: router, queue: {queue}}}
  r2: {{role: router, queue: {queue}}}
  d: {{role: host}}
  e: {{role: host}}
links:
  - {{a: a, b: r0, capacity: 1Gbps, delay: 1ms}}
  - {{a: r0, b: r1, capacity: 1Gbps, delay: 1ms}}
  - {{a: b, b: r1, capacity: 1Gbps, delay: 1ms}}
  - {{id: l155, a: r1, b: r2, capacity: 155Mbps, delay: 20ms}}
  - {{id: l100, a: r2, b: d, capacity: 100Mbps, delay: 20ms}}
  - {{a: r2, b: e, capacity: 1Gbps, delay: 1ms}}
flows:
  - {{id: long, proto: xcp, src: a, dst: d}}
  - {{id: short, proto: xcp, src: b, dst: e}}
  - {{id: tcp, proto: tcp, src: a, dst: d}}
"""


def _plan(queue: str = "ixcp", seed: int = 1):
    return make_plan(load_spec_text(SPEC.format(queue=queue, seed=seed), "low.yaml"), "t-1")


def _ids(plan) -> dict[str, int]:
    return {f"{d.src}->{d.dst}": d.queue.params["link_id"]
            for link in plan.links for d in (link.a_to_b, link.b_to_a) if d.queue.kind == "ixcp"}


def _argv_id(plan, flow: str) -> int | None:
    argv = plan.flow(flow).client_argv
    return int(argv[argv.index("--ixcp-link-id") + 1]) if "--ixcp-link-id" in argv else None


def test_every_ixcp_direction_has_a_distinct_nonzero_id() -> None:
    plan = _plan()
    ids = _ids(plan)
    assert "r1->r2" in ids and "r2->d" in ids
    assert all(0 < v < 2**32 for v in ids.values())
    assert len(set(ids.values())) == len(ids)
    for link in plan.links:
        for d in (link.a_to_b, link.b_to_a):
            assert ("link_id" in d.queue.params) == (d.queue.kind == "ixcp")


def test_ids_follow_the_seed() -> None:
    assert _ids(_plan(seed=1)) == _ids(_plan(seed=1))
    assert _ids(_plan(seed=1)) != _ids(_plan(seed=2))


def test_sender_starts_from_the_first_ixcp_direction_on_its_path() -> None:
    plan = _plan()
    ids = _ids(plan)
    # a's first hop r0 is DropTail: its access id is the first iXCP router's output
    # link; b sits on r1, whose ingress from b is not an iXCP queue either.
    path = plan.flow("long").path
    first_long = next(ids[f"{x}->{y}"] for x, y in itertools.pairwise(path)
                      if f"{x}->{y}" in ids)
    assert _argv_id(plan, "long") == first_long
    assert _argv_id(plan, "short") is not None
    assert _argv_id(plan, "tcp") is None


def test_plain_xcp_plan_has_no_ids() -> None:
    plan = _plan("xcp")
    assert _ids(plan) == {}
    assert _argv_id(plan, "long") is None


@pytest.mark.parametrize(("queue", "needle"), [
    ("{kind: ixcp, estimator: oracle}", "not parameters of queue kind ixcp"),
    ("{kind: ixcp, params: {link_id: 5}}", "not parameters of queue kind ixcp: params"),
    ("{kind: ixcp, link_id: 5}", "not parameters of queue kind ixcp: link_id"),
    ("{kind: ixcp, gamma: 2}", "gamma"),
])
def test_bad_ixcp_queues_are_refused(queue: str, needle: str) -> None:
    with pytest.raises(SpecError) as e:
        _plan(queue)
    assert needle in str(e.value)


def test_ixcp_takes_xcp_params_and_the_fairness_option() -> None:
    plan = _plan("{kind: ixcp, gamma: 0.2, tcp_fairness: true}")
    q = next(x for x in plan.links if x.id == "l155").a_to_b.queue
    assert q.params["gamma"] == 0.2 and q.params["tcp_fairness"] is True
    assert "link_id" in q.params

"""What ns-2.35 lacks is refused with the feature named, by validate and by run."""

from __future__ import annotations

from pathlib import Path

import pytest
from ns2_spec_helpers import spec

from orchestrator.backends.ns2.mapping import refusals
from orchestrator.cli import main
from orchestrator.plan.planner import make_plan
from orchestrator.runner import execute_run
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import XcplabError


def refused(text: str) -> list[str]:
    return refusals(make_plan(load_spec_text(text, "<test>", []), "refuse"))


def test_a_plan_ns2_can_express_is_not_refused() -> None:
    assert refused(spec()) == []
    assert refused(spec(queue="red", loss=", loss: 1%",
                        flow="{id: f, proto: tcp, cc: reno, src: s, dst: d}")) == []


@pytest.mark.parametrize(("kwargs", "feature"), [
    ({"queue": "xcpi"}, "XCP-i (queue kind xcpi)"),
    ({"queue": "{kind: xcp, alpha: 0.5}"}, "XCP parameter alpha=0.5"),
    ({"queue": "{kind: xcp, tcp_fairness: true}"}, "the XCP-TCP fairness dropper (tcp_fairness)"),
    ({"queue": "{kind: xcp, min_interval: 5ms}"}, "XCP parameter min_interval_s=0.005"),
    ({"flow": "{id: f, proto: tcp, cc: cubic, src: s, dst: d}"},
     "kernel TCP congestion control cubic"),
    ({"flow": "{id: f, proto: tcp, cc: bbr, src: s, dst: d}"},
     "kernel TCP congestion control bbr"),
    ({"flow": "{id: f, proto: udp, rate: 1Mbps, src: s, dst: d}"}, "UDP flows"),
    ({"flow": "{id: f, proto: xcp, rate: 1Mbps, src: s, dst: d}"}, "a sender rate cap"),
    ({"flow": "{id: f, proto: xcp, src: s, dst: d, objects: [{at: 1s, size: 1KB}]}"},
     "web-like objects"),
    ({"flow": "{id: f, src: s, dst: d, app: {server: 'srv {port}', client: 'cli {dst}'}}"},
     "an app flow runs real programs"),
    ({"loss": ", loss: {model: gilbert_elliott, p: 0.01, r: 0.3}"}, "Gilbert-Elliott loss"),
    ({"timeline": "timeline:\n  - {at: 1s, set_link: {link: r1-r2, loss: {model: "
                  "gilbert_elliott, p: 0.01, r: 0.3}}}"},
     "timeline: set_link of r1-r2 at 1 s: Gilbert-Elliott loss"),
    ({"timeline": "timeline:\n  - {at: 1s, link_down: r1-r2}"},
     "timeline: link_down of r1-r2 at 1 s: links going down or up"),
    ({"timeline": "timeline:\n  - {at: 1s, link_up: r1-r2}"},
     "timeline: link_up of r1-r2 at 1 s: links going down or up"),
])
def test_missing_features_are_named(kwargs: dict, feature: str) -> None:
    problems = refused(spec(**kwargs))
    assert problems and any(feature in p for p in problems), problems


def test_link_changes_ns2_can_replay_are_not_refused() -> None:
    assert refused(spec(timeline="timeline:\n  - {at: 1s, set_link: {link: r1-r2, capacity: "
                                 "5Mbps, delay: 10ms, buffer: 20pkts, loss: 1%}}")) == []


def test_a_route_ns2_would_not_take_is_refused() -> None:
    # a square: s-r1-r2-d and s-r3-d... two fewest-hop paths from s to d
    text = """\
name: square
duration: 1s
nodes:
  s: {role: host}
  a: {role: router, queue: droptail}
  b: {role: router, queue: droptail}
  d: {role: host}
links:
  - {a: s, b: a, capacity: 10Mbps, delay: 1ms}
  - {a: s, b: b, capacity: 10Mbps, delay: 1ms}
  - {a: a, b: d, capacity: 10Mbps, delay: 1ms}
  - {a: b, b: d, capacity: 10Mbps, delay: 1ms}
flows:
  - {id: f, proto: newreno, src: s, dst: d}
"""
    try:
        problems = refused(text)
    except XcplabError:  # the planner itself may refuse hosts with two links
        pytest.skip("the planner does not route multi-homed hosts")
    assert any("not the only fewest-hop path" in p for p in problems), problems


def test_validate_with_backend_names_the_feature_and_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(spec(queue="xcpi"))
    assert main(["validate", str(path)]) == 0
    capsys.readouterr()
    assert main(["validate", str(path), "--backend", "ns2"]) == 2
    err = capsys.readouterr().err
    assert "backend ns2: link r1->r2: XCP-i (queue kind xcpi)" in err


def test_run_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    with pytest.raises(XcplabError,
                       match=r"(?s)ns-2\.35 cannot run this plan:.*congestion control cubic"):
        execute_run(spec_text=spec(flow="{id: f, proto: tcp, cc: cubic, src: s, dst: d}"),
                    out_dir=tmp_path, backend="ns2")
    assert list(tmp_path.iterdir()) == []

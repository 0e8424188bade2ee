"""GraphML import in the Topology Zoo's format (orchestrator.topology.graphml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.topology import graphml

SAMPLE = Path(__file__).resolve().parents[3] / "experiments" / "deployment" / "zoo-sample.graphml"


def test_sample_file_values_and_rules():
    g = graphml.read(SAMPLE, None, keep_largest=False)
    assert sorted(g.nodes) == [f"r{i}" for i in range(8)]
    assert g.nodes["r0"]["label"] == "Paris"
    assert g.nodes["r7"]["domain"] == "external" and g.nodes["r0"]["domain"] == "internal"
    assert g.edges["r0", "r1"]["capacity_bps"] == 10e6       # LinkSpeedRaw
    assert g.edges["r0", "r4"]["capacity_bps"] == 5e6        # LinkSpeed x LinkSpeedUnits
    assert g.edges["r3", "r5"]["capacity_bps"] is None       # no speed: the rule's
    assert g.edges["r1", "r6"]["delay_s"] is None            # Grenoble has no coordinates
    # Paris-Lyon ~392 km great circle at 5 us/km
    assert g.edges["r0", "r1"]["delay_s"] == pytest.approx(392 * 5e-6, rel=0.01)
    assert sum(1 for n in g if g.nodes[n]["tier"] == "edge") == 4  # half, lowest degree


def test_edge_routers_count():
    g = graphml.read(SAMPLE, 2, keep_largest=False)
    assert sorted(n for n in g if g.nodes[n]["tier"] == "edge") == ["r6", "r7"]


def _write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "g.graphml"
    p.write_text('<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
                 + body + "</graphml>")
    return p


def test_not_xml_is_an_error(tmp_path):
    p = tmp_path / "bad.graphml"
    p.write_text("<graphml><graph><node id='1'></graph>")
    with pytest.raises(graphml.GraphMLError, match="not a readable GraphML file"):
        graphml.read(p, None, False)


def test_disconnected_needs_keep_largest(tmp_path):
    p = _write(tmp_path, '<graph edgedefault="undirected"><node id="a"/><node id="b"/>'
               '<node id="c"/><node id="d"/><node id="e"/><edge source="a" target="b"/>'
               '<edge source="b" target="c"/><edge source="d" target="e"/></graph>')
    with pytest.raises(graphml.GraphMLError, match="2 components.*keep_largest"):
        graphml.read(p, None, False)
    assert sorted(graphml.read(p, None, True).nodes) == ["ra", "rb", "rc"]


def test_parallel_edges_and_self_loops(tmp_path):
    p = _write(tmp_path, '<key attr.name="LinkSpeedRaw" attr.type="double" for="edge" id="s"/>'
               '<graph edgedefault="undirected"><node id="a"/><node id="b"/>'
               '<edge source="a" target="b"><data key="s">1000000</data></edge>'
               '<edge source="a" target="b"><data key="s">3000000</data></edge>'
               '<edge source="a" target="a"/></graph>')
    g = graphml.read(p, None, False)
    assert g.number_of_edges() == 1 and g.edges["ra", "rb"]["capacity_bps"] == 3e6


def test_too_small(tmp_path):
    p = _write(tmp_path, '<graph edgedefault="undirected"><node id="a"/></graph>')
    with pytest.raises(graphml.GraphMLError, match="at least two routers"):
        graphml.read(p, None, False)

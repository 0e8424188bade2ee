"""Engine `stats` (CONTROL.md) -> link.csv rows: labels, rates, drops, XCP columns."""

from __future__ import annotations

from agents.link_sampler import PortDir, RateTracker, engine_rows, xcp_columns
from xcplab_contract.columns import COLUMNS


def _stats(out_bytes: int, q: int = 3) -> dict:
    link = {"config": {"capacity_bps": 10_000_000}, "in_packets": 10, "in_bytes": 15000,
            "out_packets": 9, "out_bytes": out_bytes,
            "queue": {"packets": q, "bytes": q * 1500, "max_packets": 7, "max_bytes": 0},
            "drops": {"queue": 2, "loss": 1, "link_down": 0},
            "qdisc": {"xcp": {"d": 0.05, "phi": 1200.0, "h": 10.0, "y": 1e6, "Q": 300,
                              "xi_p": 1e-3, "xi_n": 2e-3, "pos_pool": 5.0, "neg_pool": 6.0}}}
    port = {"drops": {"ttl": 4, "no_route": 5, "malformed": 6}, "egress": link, "ingress": None}
    return {"ok": True, "time_ns": int(out_bytes / 125_000 * 1e8) + 10**9,
            "routers": {"r1": {"ports": {"r1:eth1": port}}}}


def test_engine_rows_layout_and_rates() -> None:
    d = [PortDir("r1", "r1:eth1", "eth1", "egress", "r1->h2", 10_000_000),
         PortDir("r1", "r1:eth1", "eth1", "ingress", "h2->r1", 10_000_000)]
    rates = RateTracker()
    first = engine_rows(_stats(0), d, 1.0, rates)
    assert len(first) == 1  # no ingress stage on this port
    row = first[0]
    assert set(row) == set(COLUMNS["link"])
    assert row["link"] == "r1->h2" and row["rate_bps"] == "" and row["queue_pkts"] == 3
    assert (row["drops_queue"], row["drops_loss"], row["drops_ttl"]) == (2, 1, 4)
    assert row["xcp_phi"] == 1200.0 and row["xcp_Q"] == 300 and row["xcp_neg_pool"] == 6.0
    # 125 000 bytes in 0.1 s = 10 Mb/s = the whole capacity
    second = engine_rows(_stats(125_000), d, 1.1, rates)[0]
    assert abs(second["rate_bps"] - 10e6) < 1 and abs(second["utilization"] - 1.0) < 1e-6


def test_stage_state_goes_to_xcpi_and_fairness_in_long_form() -> None:
    stats = _stats(0)
    link = stats["routers"]["r1"]["ports"]["r1:eth1"]["egress"]
    link["qdisc"]["xcp"]["fairness"] = {"p_drop": 0.01, "n_tcp": 3.5, "bw_xcp": 1e6}
    link["qdisc"]["xcp"]["xcpi_virtual"] = {"10.0.0.1": {"estimate_bps": 5e6, "timeouts": 2}}
    extra: dict = {}
    d = [PortDir("r1", "r1:eth1", "eth1", "egress", "r1->h2", 10_000_000)]
    engine_rows(stats, d, 2.0, RateTracker(), extra)
    fair = {r["key"]: r["value"] for r in extra["fairness"]}
    assert fair == {"fairness.p_drop": 0.01, "fairness.n_tcp": 3.5, "fairness.bw_xcp": 1e6}
    xcpi = extra["xcpi"]
    assert {r["key"] for r in xcpi} == {"xcpi_virtual.10.0.0.1.estimate_bps",
                                        "xcpi_virtual.10.0.0.1.timeouts"}
    assert all(r["link"] == "r1->h2" and r["t_s"] == 2.0 for r in xcpi)
    assert set(extra["xcpi"][0]) == set(COLUMNS["xcpi"])


def test_non_xcp_queue_leaves_xcp_columns_empty() -> None:
    assert set(xcp_columns({"droptail": {}}).values()) == {""}
    assert set(xcp_columns(None).values()) == {""}

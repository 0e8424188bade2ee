"""The seed reproductions at full length (`make reproduce`, marker `reproduce`).

Every expectation of each spec must pass and the emulation must be faithful; the
sweeps check the papers' claims across their points. docs/reproductions.md lists
the measured numbers beside the papers'. Roughly 15 min of runs plus the sweeps.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from reproduce_helpers import (
    EXPERIMENTS,
    failed_checks,
    fidelity_problems,
    need_tools,
    run_spec,
    run_sweep,
)

pytestmark = [pytest.mark.root, pytest.mark.reproduce, pytest.mark.timeout(7200)]

SINGLE_RUNS = [
    "xcpi/fig2a-tcp.yaml",
    "xcpi/fig2b-xcp.yaml",
    "xcpi/fig2c-xcp-legacy.yaml",
    "sigcomm02/rtt-fairness.yaml",
    "sigcomm02/rtt-fairness-tcp.yaml",
    "sigcomm02/convergence.yaml",
]
# Seed 000's XCP-i scenarios with the oracle estimator, and the specs written for
# the chirp estimator (docs/reproductions.md, "XCP-i (seed 000)"); checks xcplab does
# not reproduce are marked in the specs.
XCPI_RUNS = [
    "xcpi/fig2c-xcpi-oracle.yaml",
    "xcpi/fig4-asym-sender-cloud-oracle.yaml",
    "xcpi/fig4-asym-receiver-cloud-oracle.yaml",
    "xcpi/fig2c-xcpi-chirp.yaml",                 # r3's V on r1's chirps
    "xcpi/fig4-asym-receiver-cloud-chirp.yaml",  # the receiver's V on r1's chirps
    "xcpi/fig4-asym-sender-cloud-chirp.yaml",    # r3's V on the sender host's chirps
    "xcpi/fig14-shared-bottleneck-chirp.yaml",   # two Vs on chirps of one shared link
    "xcpi/fig5-peering-oracle.yaml",
    "xcpi/fig7-merge-oracle.yaml",
    "xcpi/fig9-merge-oracle.yaml",
    "xcpi/fig11-fork-oracle.yaml",
    "xcpi/fig13-merge10x-exact-oracle.yaml",
    "xcpi/fig13-merge10x-err10-oracle.yaml",
    "xcpi/fig13-merge10x-err20-oracle.yaml",
    "xcpi/fig13-merge10x-tcp.yaml",
    "xcpi/fig14-shared-bottleneck-oracle.yaml",
]
# The same scenarios with the pathChirp estimator where it reproduces them (the chirp
# column of docs/reproductions.md): every XCP-i router's estimator set to chirp.
CHIRP_RUNS = [
    "xcpi/fig5-peering-oracle.yaml",
    "xcpi/fig9-merge-oracle.yaml",
    "xcpi/fig11-fork-oracle.yaml",
]
LOSS_RATES = ["0.01%", "0.1%", "1%", "2.5%", "5%", "10%"]
BUFFERS = ["0.01BDP", "0.05BDP", "0.1BDP", "0.25BDP", "0.5BDP", "1BDP"]


@pytest.mark.parametrize("spec", SINGLE_RUNS + XCPI_RUNS)
def test_seed_experiment_meets_its_expectations(spec: str, run_out: Path) -> None:
    need_tools()
    s = run_spec(spec, run_out, [], timeout_s=600)
    assert s["status"] == "completed"
    assert not failed_checks(s), f"{spec}: {failed_checks(s)}\nrun: {s['_dir']}"
    assert not fidelity_problems(s), f"{spec}: unfaithful emulation: {fidelity_problems(s)}"


@pytest.mark.parametrize("spec", CHIRP_RUNS)
def test_xcpi_scenario_with_the_chirp_estimator(spec: str, run_out: Path) -> None:
    from orchestrator.plan.xcpi import xcpi_routers
    from orchestrator.spec import load_spec

    need_tools()
    routers = sorted(xcpi_routers(load_spec(EXPERIMENTS / spec)))
    s = run_spec(spec, run_out, [f"nodes.{r}.queue.estimator=chirp" for r in routers],
                 timeout_s=600)
    assert s["status"] == "completed"
    assert not failed_checks(s), f"{spec} (chirp): {failed_checks(s)}\nrun: {s['_dir']}"
    assert not fidelity_problems(s), f"{spec} (chirp): unfaithful: {fidelity_problems(s)}"


def test_hstcp_takes_several_times_newreno_share(run_out: Path) -> None:
    """Seed 003 Fig. 4 over 5 repetitions, every run faithful. The spec's check states
    the paper's "over ten times" from 30 s on and is marked not reproduced (~8x here);
    each run must still have measured it.

    With every segment ACKed, as the paper's ns-2 sinks do, each congestion epoch
    hits both flows and the ratio climbs toward the synchronised equilibrium
    (~8x): 10 runs of 60 s measured 6.38..7.87 over 30-60 s (3.35..5.84 over the
    whole run, start-up included). With delayed ACKs single runs spread 1.8..6.2
    and only the median held (docs/reproductions.md)."""
    need_tools()
    rows = run_sweep("hstcp/dumbbell-50mbps.yaml", run_out, [], repeat=5, timeout_s=900)
    assert all(r["status"] == "completed" for r in rows), [r["error"] for r in rows]
    assert all(r["fidelity_ok"] == "True" for r in rows), [r["run_id"] for r in rows]
    whole_run = [float(r["flow.hstcp.throughput_mbps"]) / float(r["flow.newreno.throughput_mbps"])
                 for r in rows]
    assert not _failed_points(rows), f"{_failed_points(rows)}; whole-run ratios {whole_run}"
    assert all(r["expectations_not_reproduced"] == "1" for r in rows), rows


def test_fig2c_moves_at_most_half_of_fig2b(run_out: Path) -> None:
    """The cross-run claim an expect: block cannot state: (c) <= 50 % of (b)."""
    need_tools()
    b = run_spec("xcpi/fig2b-xcp.yaml", run_out / "b", [], timeout_s=600)
    c = run_spec("xcpi/fig2c-xcp-legacy.yaml", run_out / "c", [], timeout_s=600)
    ratio = c["flows"]["xcp"]["bytes"] / b["flows"]["xcp"]["bytes"]
    assert ratio <= 0.5, f"(c)/(b) = {ratio:.3f} (paper 52.426 / 223.808 = 0.234)"


def test_fig13_xcpi_outperforms_tcp(run_out: Path) -> None:
    """Seed 000 Fig. 13's cross-run claim: "XCP-i still outperforms TCP on high-speed
    links" (i + j: 670 + 244 MB exact against TCP's 329 + 172 MB in 20 s). Both specs
    run scaled x0.1, where TCP is much closer to XCP-i than in the paper."""
    need_tools()
    x = run_spec("xcpi/fig13-merge10x-exact-oracle.yaml", run_out / "xcpi", [], timeout_s=300)
    t = run_spec("xcpi/fig13-merge10x-tcp.yaml", run_out / "tcp", [], timeout_s=300)
    assert not fidelity_problems(x) and not fidelity_problems(t), (
        fidelity_problems(x), fidelity_problems(t))
    xb = x["flows"]["i"]["bytes"] + x["flows"]["j"]["bytes"]
    tb = t["flows"]["i"]["bytes"] + t["flows"]["j"]["bytes"]
    assert xb > tb, f"XCP-i {xb / 1e6:.1f} MB <= TCP {tb / 1e6:.1f} MB (paper 914 vs 501 MB)"


def _mean(rows: list[dict[str, str]], param: str, key: str, col: str) -> float:
    vals = [float(r[col]) for r in rows if r[f"param.{param}"] == key and r[col]]
    return statistics.mean(vals) if vals else float("nan")


def _failed_points(rows: list[dict[str, str]]) -> list[str]:
    """Points with a failed check, and unfaithful points (their checks are unjudged)."""
    return [f"{r['run_id']}: {r['expectations_failed']} failed" + (
                "" if r["fidelity_ok"] == "True" else ", UNFAITHFUL")
            for r in rows
            if int(r["expectations_failed"] or 0) > 0 or r["fidelity_ok"] != "True"]


def test_wireless_loss_sweep(run_out: Path) -> None:
    """Seed 002: every point's checks (XCP >= TCP from 1 %, ~2x at 1 %, collapse at
    10 %, ...) and, on the means of 3 repetitions, XCP above TCP wherever the spec
    says so."""
    need_tools()
    loss = "defaults.link.loss"
    rows = run_sweep("wireless/loss-sweep.yaml", run_out,
                     [f"{loss}={','.join(LOSS_RATES)}"], repeat=3, timeout_s=7000)
    assert all(r["status"] == "completed" for r in rows), [r["error"] for r in rows]
    assert not _failed_points(rows), _failed_points(rows)
    for xcp, tcp, rates in (("x1", "t1", LOSS_RATES[2:]), ("x3", "t3", LOSS_RATES[1:])):
        for rate in rates:
            x = _mean(rows, loss, rate, f"flow.{xcp}.throughput_mbps")
            t = _mean(rows, loss, rate, f"flow.{tcp}.throughput_mbps")
            assert x >= t, f"{xcp} {x:.2f} Mb/s < {tcp} {t:.2f} Mb/s at {rate} loss"


BUFFER_PROTOCOLS = (("xcp", "xcp"), ("hstcp", "droptail"), ("newreno", "droptail"))
BUF = "links[bottleneck].buffer"
# The flows' tools run at the agent's default host_nice (-15, with their sessions'
# autogroups: agents/README.md); on a machine shared with other work the small-buffer
# points are judged by fidelity's host-burst rule (analysis/host_procs.check_host_bursts).


@pytest.fixture(scope="module")
def buffer_sweeps(module_run_out: Path) -> dict[str, list[dict[str, str]]]:
    """Seed 003 Fig. 5's three sweeps, run once for the tests below."""
    need_tools()
    out = module_run_out / "buffer-sweeps"
    return {proto: run_sweep("hstcp/buffer-sweep.yaml", out / proto, [
        f"defaults.flow.proto={proto}", f"defaults.router.queue={queue}",
        f"{BUF}={','.join(BUFFERS)}"], repeat=1, timeout_s=3000)
        for proto, queue in BUFFER_PROTOCOLS}


@pytest.mark.parametrize("proto", [p for p, _ in BUFFER_PROTOCOLS])
def test_buffer_sweep_above_90_percent_from_10_percent_bdp(
        proto: str, buffer_sweeps: dict[str, list[dict[str, str]]]) -> None:
    """> 90 % utilisation from 10 % BDP up: each point's own check (skipped below)."""
    rows = buffer_sweeps[proto]
    assert all(r["status"] == "completed" for r in rows), [r["error"] for r in rows]
    assert not _failed_points(rows), _failed_points(rows)


def test_xcp_least_sensitive_to_small_buffers(
        buffer_sweeps: dict[str, list[dict[str, str]]]) -> None:
    """At the smallest buffers (1 % and 5 % BDP) XCP's utilisation is at least the TCPs'.

    It holds with receivers that ACK every segment, as the paper's ns-2 sinks do
    (the sweep's delayed_ack: false); with delayed ACKs XCP fell to the TCPs'
    level (5 % BDP: 0.81 vs 0.84), docs/reproductions.md."""
    small = {proto: statistics.mean(_mean(rows, BUF, b, "link.r1->r2.utilization")
                                    for b in BUFFERS[:2])
             for proto, rows in buffer_sweeps.items()}
    assert small["xcp"] >= max(small["hstcp"], small["newreno"]), small


COMPLEX = "hstcp/complex-tiers.yaml"
COMPLEX_BUFFERS = ["0.01BDP", "0.1BDP", "1BDP"]
HIGH_BANDWIDTH = ("link.n24->n18.utilization", "link.n18->n5.utilization")


@pytest.fixture(scope="module")
def complex_sweeps(module_run_out: Path) -> dict[str, list[dict[str, str]]]:
    """Seed 003's complex scenario (reconstructed topology, experiments/hstcp/
    complex-tiers.yaml) per protocol over three buffer sizes, run once."""
    need_tools()
    out = module_run_out / "complex-tiers"
    return {proto: run_sweep(COMPLEX, out / proto, [
        f"defaults.flow.proto={proto}", f"defaults.router.queue={queue}",
        f"defaults.link.buffer={','.join(COMPLEX_BUFFERS)}"], repeat=1, timeout_s=1800)
        for proto, queue in BUFFER_PROTOCOLS}


@pytest.mark.parametrize("proto", [p for p, _ in BUFFER_PROTOCOLS])
def test_complex_topology_high_bandwidth_links_above_90_percent(
        proto: str, complex_sweeps: dict[str, list[dict[str, str]]]) -> None:
    """Seed 003 Fig. 2 and Fig. 5: TCP, HSTCP and XCP each keep the high-bandwidth links
    above 90 % with a BDP buffer and with 10 % of it, among 200 FTP flows, 300 web
    sessions and reverse traffic (each point's own checks; 1 % BDP is not judged)."""
    rows = complex_sweeps[proto]
    assert all(r["status"] == "completed" for r in rows), [r["error"] for r in rows]
    assert not _failed_points(rows), _failed_points(rows)
    for r in rows:
        assert all(float(r[c]) <= 1.0 + 1e-6 for c in HIGH_BANDWIDTH), r  # physical bound


def test_complex_topology_xcp_least_sensitive_to_buffer(
        complex_sweeps: dict[str, list[dict[str, str]]]) -> None:
    """Seed 003 Fig. 5: "XCP flows are the most insensitive to variation of buffer size":
    at 1 % BDP XCP's high-bandwidth utilisation is at least the TCPs'."""
    small = {proto: statistics.mean(_mean(rows, "defaults.link.buffer", "0.01BDP", c)
                                    for c in HIGH_BANDWIDTH)
             for proto, rows in complex_sweeps.items()}
    assert small["xcp"] >= max(small["hstcp"], small["newreno"]), small

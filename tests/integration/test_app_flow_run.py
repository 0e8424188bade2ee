"""An `app:` flow end to end (issue 20), root: experiments/apps/http-over-xcp.yaml runs
curl against `python3 -m http.server`, unmodified, over the XCP socket stack through a
20 Mb/s XCP bottleneck (40 ms round trip), 6 s of emulated time.

Asserts physics and bookkeeping: the client completes with exit status 0; the bytes the
stack acknowledged cover the file (the host's python3 binary, whatever its size) and
no more than the bottleneck carries in the completion time; the completion time is no
shorter than two round trips plus the file at the bottleneck's rate; flow.csv carries
the connections' srtt (never below the propagation RTT), cwnd and XCP feedback. Then a
client that fails (HTTP 404 with --fail) fails the run, naming the flow, the command
and its exit status. Run under `flock /tmp/xcplab-timing.lock`.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from run_helpers import fidelity_note, router_mode, run_spec, xcplab

from xcplab_contract import paths
from xcplab_contract.errors import XcplabError

pytestmark = [pytest.mark.root, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "experiments" / "apps" / "http-over-xcp.yaml"
BOTTLENECK_BPS = 20e6
RTT_S = 0.040


@pytest.fixture(autouse=True)
def _needs_the_stack() -> None:
    if router_mode() != "engine":
        pytest.skip("the XCP queue needs the xcp-router engine (make build)")
    try:
        paths.tool("xcp-stackd")
        paths.tool("libxcpsock_preload.so")
    except XcplabError as e:
        pytest.skip(str(e))


def test_curl_over_xcp_completes_with_plausible_bytes_and_time(tmp_path: Path) -> None:
    run_dir, summary = run_spec(SPEC, tmp_path, timeout=200)
    why = fidelity_note(summary)
    assert summary["status"] == "completed", (why, summary.get("error"))
    app = summary["apps"]["web"]
    assert app["status"] == "complete" and app["exit_status"] == 0, (app, why)
    file_bytes = os.path.getsize(os.path.realpath("/usr/bin/python3"))
    fct = app["fct_s"]
    # the file, its HTTP header and the request; and no faster than the path allows
    assert file_bytes <= app["bytes"] <= file_bytes + 2000, (app, file_bytes)
    assert 2 * RTT_S + file_bytes * 8 / BOTTLENECK_BPS <= fct <= 5.5, app
    assert app["bytes"] * 8 <= BOTTLENECK_BPS * fct, app  # <= capacity x time
    with (run_dir / "metrics" / "fct.csv").open() as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["flow"], row["status"], int(row["bytes"])) == ("web", "complete", app["bytes"])
    assert float(row["start_s"]) == pytest.approx(0.5, abs=0.05)
    with (run_dir / "metrics" / "flow.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["flow"] == "web"]
    streams = {r["stream"] for r in rows}
    assert {s.split(":")[0] for s in streams} == {"client", "server"}, streams
    srtt = [int(r["srtt_us"]) for r in rows if r["srtt_us"] not in ("", "0")]
    assert srtt and min(srtt) >= 0.95 * RTT_S * 1e6, srtt[:5]
    sender = [r for r in rows if r["stream"].startswith("server:")]
    assert max(int(r["cwnd_bytes"]) for r in sender) > 1424  # it opened its window
    assert any(r["feedback_bytes"] not in ("", "0") for r in sender)  # XCP routers spoke
    assert summary["flows"]["web"]["bytes"] == app["bytes"]
    # Both hosts' stack daemons are sampled like the flow tools: they move every byte.
    with (run_dir / "metrics" / "procs.csv").open() as fh:
        procs = [r for r in csv.DictReader(fh) if r["kind"] == "stackd"]
    assert {r["proc"] for r in procs} == {"stackd.client", "stackd.server"}, procs[:3]
    for host in ("client", "server"):
        cpu = [float(r["cpu_s"]) for r in procs if r["proc"] == f"stackd.{host}"]
        assert len(cpu) >= 10 and cpu == sorted(cpu) and cpu[-1] > 0, (host, cpu)
    hosts = summary["fidelity"]["hosts"]
    assert hosts["stackd.server"]["tool"] == "xcp-stackd", hosts
    print(f"app-flow: curl {app['bytes']} B in {fct:.3f} s = {app['goodput_mbps']:.2f} Mb/s "
          f"({why}); xcp-stackd CPU server {hosts['stackd.server']['cpu_fraction']:.1%} "
          f"client {hosts['stackd.client']['cpu_fraction']:.1%} of a core")


def test_a_failing_client_fails_the_run_naming_it(tmp_path: Path) -> None:
    res = xcplab("run", str(SPEC), "--out", str(tmp_path), "--no-progress",
                 "--set", "duration=3s", "--set",
                 "flows[web].app.client=curl --fail -sS -o /dev/null http://{dst}:{port}/none",
                 timeout=200)
    assert res.returncode == 1, res.stdout[-2000:]
    summary = json.loads((Path(res.stdout.strip().splitlines()[-1]) / "summary.json")
                         .read_text())
    assert summary["status"] == "failed"
    assert "app flow web: client `curl --fail" in summary["error"], summary["error"]
    assert "exited with 22" in summary["error"] and "404" in summary["error"]
    assert summary["apps"]["web"]["status"] == "failed"
    assert summary["apps"]["web"]["exit_status"] == 22

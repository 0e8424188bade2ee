"""A short real run with captures (root, namespaces, the engine): dumpcap's pcapng files
are listed and hashed in the manifest, read by tshark with the XCP dissector and by the
Python decoder (dpkt + the header twin) packet for packet alike, summarised by
`xcplab capture`, and nothing of them is left after the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tshark_run import TSHARK, fields

from orchestrator.archive.manifest import sha256_file
from orchestrator.wire.pcap import read_xcp_packets
from xcplab_contract import paths
from xcplab_contract.errors import XcplabError

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(TSHARK is None, reason="needs tshark (tools/apt-packages.txt)")]

SPEC = """\
name: capture
duration: 2.5s
defaults:
  link: {capacity: 40Mbps, delay: 5ms}
nodes:
  s1: {role: host}
  r1: {role: router, queue: xcp}
  r2: {role: router}
  d1: {role: host}
links:
  - {a: s1, b: r1}
  - {a: r1, b: r2, capacity: 10Mbps, delay: 10ms}
  - {a: r2, b: d1}
flows:
  - {id: f1, src: s1, dst: d1}
captures:
  - {link: r1-r2, direction: a_to_b}
  - {id: acks, node: d1, port: r2, direction: out, snaplen: 128B,
     window: {start: 1s, stop: 2s}}
"""


def _xcplab(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory):
    try:
        paths.tool("xcp-router")
        paths.tool("xcpperf")
    except XcplabError as e:
        pytest.skip(f"needs the engine and xcpperf built: {e}")
    tmp = tmp_path_factory.mktemp("capture-run")
    spec = tmp / "capture.yaml"
    spec.write_text(SPEC)
    run_id = "capture-20260101T000000-" + os.urandom(2).hex()
    try:
        res = _xcplab("run", str(spec), "--out", str(tmp / "runs"), "--run-id", run_id,
                      "--no-progress")
        assert res.returncode == 0, res.stdout + res.stderr
        yield tmp / "runs" / run_id
    finally:
        _xcplab("clean", run_id, timeout=60)


def test_captures_are_written_listed_and_hashed(run_dir: Path):
    index = json.loads((run_dir / "captures" / "index.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())["files"]
    assert [c["id"] for c in index["captures"]] == ["r1-r2.a_to_b", "acks"]
    for c in index["captures"]:
        path = run_dir / c["file"]
        assert path.read_bytes()[:4] == bytes.fromhex("0a0d0d0a")  # pcapng section header
        assert manifest[c["file"]]["sha256"] == sha256_file(path)
        assert c["exit_code"] == 0 and c["dropped"] == 0 and c["packets"] > 0
        assert len(fields(path, ["frame.number"])) == c["packets"]
    assert "captures/index.json" in manifest


def test_dissector_and_python_decoder_agree_on_every_packet(run_dir: Path):
    path = run_dir / "captures" / "r1-r2.a_to_b.pcapng"
    names = ["xcp.status", "xcp.format", "xcp.h_cwnd", "xcp.h_rtt", "xcp.h_feedback",
             "xcp.reverse_feedback", "xcpseg.src_port", "xcpseg.dst_port", "xcpseg.seq",
             "xcpseg.len", "ip.len"]
    rows = fields(path, names)
    ours = list(read_xcp_packets(path))
    assert len(rows) == len(ours) > 100
    for row, p in zip(rows, ours, strict=True):
        h = p.result.header
        assert row["xcp.status"] == "ok" and h is not None
        assert (int(row["xcp.format"]), int(row["xcp.h_cwnd"]), int(row["xcp.h_rtt"]),
                int(row["xcp.h_feedback"]), int(row["xcp.reverse_feedback"]),
                int(row["ip.len"])) == (int(h.format), h.cwnd_bytes, h.rtt_us,
                                        h.feedback_bytes, h.reverse_feedback_bytes, p.ip_len)
        assert int(row["xcpseg.src_port"]) == int.from_bytes(p.after_shim[0:2], "big")
        assert int(row["xcpseg.seq"]) == int.from_bytes(p.after_shim[4:12], "big")
    # IPv4 20 + shim 20 + segment 36 + payload; full-size segments fill 1500 B
    assert all(int(r["ip.len"]) == 76 + int(r["xcpseg.len"]) for r in rows)
    data = [r for r in rows if int(r["xcpseg.len"]) > 0]
    assert sum(int(r["ip.len"]) == 1500 for r in data) > 0.9 * len(data)
    # the XCP router behind this link lowered feedback: filtering by field name works
    neg = fields(path, ["xcp.h_feedback"], "xcp.h_feedback < 0")
    headers = [p.result.header for p in ours if p.result.header is not None]
    assert len(headers) == len(ours)
    assert len(neg) == sum(1 for h in headers if h.feedback_bytes < 0) > 0


def test_window_and_direction(run_dir: Path):
    index = json.loads((run_dir / "captures" / "index.json").read_text())
    acks = next(c for c in index["captures"] if c["id"] == "acks")
    assert acks["direction"] == "b_to_a" and acks["node"] == "r2"  # d1 -> r2, taken at r2
    t = [float(r["frame.time_epoch"]) - index["t0_unix"]
         for r in fields(run_dir / acks["file"], ["frame.time_epoch"])]
    # the window; the capture opens 0.1 s before it and stops 0.3 s after it
    assert 0.85 < min(t) < 1.05 and 1.95 < max(t) < 2.35
    # only the d1 -> r2 direction: Minimal (ACK) shims from the receiver's address
    rows = fields(run_dir / acks["file"], ["xcp.format", "ip.src"])
    assert {r["xcp.format"] for r in rows} == {"2"} and len({r["ip.src"] for r in rows}) == 1


def test_xcplab_capture_summary(run_dir: Path, tmp_path: Path):
    png = tmp_path / "fb.png"
    res = _xcplab("capture", str(run_dir), "--json", "--interval", "0.5s", "--plot", str(png))
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    main = next(c for c in s["captures"] if c["id"] == "r1-r2.a_to_b")
    [f1] = [f for f in main["flows"] if f["flow"] == "f1" and f["direction"] == "data"]
    index = json.loads((run_dir / "captures" / "index.json").read_text())
    assert f1["packets"] == index["captures"][0]["packets"]  # every packet is f1's data
    assert 5 < f1["mbps"] <= 10.5  # on a 10 Mb/s bottleneck
    assert f1["feedback_min"] < 0 < f1["feedback_max"]
    assert len(f1["over_time"]) >= 4 and png.stat().st_size > 10_000
    acks = next(c for c in s["captures"] if c["id"] == "acks")
    assert [(f["flow"], f["direction"]) for f in acks["flows"]] == [("f1", "ack")]
    table = _xcplab("capture", str(run_dir), "--id", "acks")
    assert table.returncode == 0 and "f1" in table.stdout and "ack" in table.stdout


def test_nothing_left_after_the_run(run_dir: Path):
    run_id = run_dir.name
    res = _xcplab("clean", run_id)
    assert res.returncode == 0, res.stderr
    # no dumpcap writes into this run directory any more
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
    assert not [line for line in ps.stdout.splitlines()
                if "dumpcap" in line and run_id in line]

"""xcpperf's contract with its callers: exit codes, error messages, JSON, signals, demux."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from typing import Any

import pytest
from kernel_router import client, kernel_router, nft_rules, xcpperf_built

from xcplab_contract.paths import tool

pytestmark = pytest.mark.skipif(not xcpperf_built(), reason="xcpperf not built (make build)")


def test_usage_errors_exit_2_and_name_the_option() -> None:
    for args, needle in ((["-c", "10.0.0.300"], "-c"),
                         (["-c", "10.0.0.1", "--cc", "cubic"], "--cc"),
                         (["-s", "-c", "10.0.0.1"], "exactly one"),
                         (["-c", "1.2.3.4", "-P", "0"], "-P"),
                         (["-c", "1.2.3.4", "--bogus"], "--bogus")):
        p = subprocess.run([str(tool("xcpperf")), *args], check=False, capture_output=True,
                           text=True)
        assert p.returncode == 2, args
        assert needle in p.stderr, (args, p.stderr)


@pytest.mark.root
def test_no_server_exits_3_after_the_connect_timeout(topology: Any) -> None:
    topo = kernel_router(topology)
    t0 = time.monotonic()
    res = client(topo, "-t", "2", "--connect-timeout", "1.5")
    elapsed = time.monotonic() - t0
    assert res.rc == 3
    assert "no answer to SYN" in res.stderr
    assert "no answer to SYN" in res.doc["error"]  # also inside the JSON document
    assert 1.5 <= elapsed < 5  # SYN at 0 s and 1 s, gives up at the 3 s timeout at the latest


@pytest.mark.root
def test_corrupted_payload_makes_verify_fail_with_exit_4(topology: Any) -> None:
    topo = kernel_router(topology)
    # Overwrite byte 500 after the IP header of every full-size packet:
    # minus 20 (shim) + 36 (segment) + 16 (preamble) = pattern offset 428.
    nft_rules(topo, "xcplab_mangle", "m", "meta l4proto 253 ip length > 1000 @th,4000,8 set 0x5a")
    server = topo.xcpperf_server("h2", "--one-off")
    res = client(topo, "-n", "1M", "--verify", "--cc", "newreno", "-i", "0")
    assert res.rc == 4, res.stderr
    assert "payload mismatch at payload offset 428" in res.stderr
    assert res.doc["end"]["verify"] == "mismatch"
    assert server.wait(timeout=10) == 4  # the server saw it too


@pytest.mark.root
def test_sigint_ends_the_test_with_a_final_report(topology: Any) -> None:
    topo = kernel_router(topology, tbf_mbit=50)
    topo.xcpperf_server("h2")
    p = topo.xcpperf("h1", "-c", topo.addr("h2"), "-t", "60", "-i", "0.2", "--cc", "newreno",
                     "--json-stream")
    assert p.stdout is not None
    events = []
    for line in p.stdout:
        events.append(json.loads(line))
        if sum(e["event"] == "interval" for e in events) == 5:
            p.send_signal(signal.SIGINT)
            break
    rest, err = p.communicate(timeout=15)
    events += [json.loads(x) for x in rest.splitlines()]
    assert p.returncode == 0, err
    assert events[0]["event"] == "start"
    end = events[-1]
    assert end["event"] == "end"
    assert end["data"]["interrupted"] is True
    assert 0.9 < end["data"]["sum_sent"]["seconds"] < 5
    # Every interval carries the fields the agent samples.
    for e in events[1:-1]:
        s = e["data"]["streams"][0]
        for key in ("bytes", "bits_per_second", "cwnd", "srtt_us", "retransmits", "feedback_bytes"):
            assert key in s
    assert end["data"]["sum_received"]["bytes"] >= end["data"]["sum_sent"]["bytes"] > 0


@pytest.mark.root
def test_parallel_streams_and_concurrent_processes_share_one_host(topology: Any) -> None:
    topo = kernel_router(topology, tbf_mbit=100)
    topo.xcpperf_server("h2")
    n = 1_000_000
    args = ["-c", topo.addr("h2"), "-n", str(n), "-P", "3", "--verify", "--cc", "newreno",
            "-i", "0", "--json"]
    procs = [topo.xcpperf("h1", *args) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        end = json.loads(out)["end"]
        assert [s["receiver"]["bytes"] for s in end["streams"]] == [n + 16] * 3
        assert {s["receiver"]["verify"] for s in end["streams"]} == {"ok"}


@pytest.mark.root
def test_one_process_carries_1024_streams(topology: Any) -> None:
    """Seed 001's n = 1024: every handshake answered and every stream delivering.

    With the one-stream default (16 MiB each, all filled) the client allocated and
    wrote 16 GiB before it read the SYN-ACKs: "no answer to SYN", then resets.
    """
    topo = kernel_router(topology)
    topo.xcpperf_server("h2")
    res = client(topo, "-P", "1024", "-t", "1", "-i", "0", "--cc", "newreno", timeout_s=90)
    assert res.rc == 0, res.stderr[-2000:]
    streams = res.doc["end"]["streams"]
    assert len(streams) == 1024
    assert min(s["receiver"]["bytes"] for s in streams) > 16  # beyond the preamble
    assert len({s["sender"]["socket"] for s in streams}) == 1024


@pytest.mark.root
def test_one_server_process_serves_several_ports_one_test_each(topology: Any) -> None:
    """-p P1,P2: the agent's one server per host for flows sharing it. With --one-off
    it outlives the first port's test and exits once every port has served one."""
    topo = kernel_router(topology, tbf_mbit=100)
    server = topo.xcpperf_server("h2", "-p", "5301,5302", "--one-off")
    n = 300_000
    out = {}
    for port in ("5302", "5301"):
        p = topo.xcpperf("h1", "-c", topo.addr("h2"), "-p", port, "-n", str(n), "-P", "2",
                         "--verify", "--cc", "newreno", "-i", "0", "--json")
        text, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        out[port] = json.loads(text)["end"]
        if port == "5302":  # one port served: a one-off server of two ports keeps serving
            time.sleep(0.3)
            assert server.poll() is None
    for end in out.values():
        assert [s["receiver"]["bytes"] for s in end["streams"]] == [n + 16] * 2
        assert {s["receiver"]["verify"] for s in end["streams"]} == {"ok"}
    assert server.wait(timeout=10) == 0


@pytest.mark.root
def test_one_client_process_plays_several_object_flows_each_reported(topology: Any) -> None:
    """--job NAME: the agent's one process for a web server's sessions to several clients
    (seed 003: 10 flows per server host). Every event carries its job; each job has its
    own start, objects and end, and every object completes intact at its own server."""
    topo = kernel_router(topology, tbf_mbit=100)
    # no --one-off: an object client's connections come and go (as the plan's web servers)
    topo.xcpperf_server("h2", "-p", "5311,5312")
    dst = topo.addr("h2")
    sizes = {"a": [3000, 50_000, 2000], "b": [120_000, 7000]}
    p = topo.xcpperf("h1", "--json-stream", "-i", "0.1", "--cc", "newreno", "--verify",
                     "--job", "a", "-c", dst, "-p", "5311", "--objects",
                     ",".join(f"{0.05 * i:g}:{b}" for i, b in enumerate(sizes["a"])), "-t", "5",
                     "--job", "b", "-c", dst, "-p", "5312", "--objects",
                     ",".join(f"{0.1 * i:g}:{b}" for i, b in enumerate(sizes["b"])), "-t", "5")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    events = [json.loads(x) for x in out.splitlines()]
    assert {e.get("job") for e in events} == {"a", "b"}  # every line tagged
    for job, want in sizes.items():
        mine = [e for e in events if e["job"] == job]
        assert mine[0]["event"] == "start" and mine[-1]["event"] == "end"
        assert mine[0]["data"]["connecting_to"]["port"] == {"a": 5311, "b": 5312}[job]
        objs = [e["data"] for e in mine if e["event"] == "object"]
        assert sorted(o["bytes"] for o in objs) == sorted(want)
        assert {o["status"] for o in objs} == {"complete"}, (job, objs)
        assert [o["bytes_received"] for o in mine[-1]["data"]["objects"]] == want
        assert any(e["event"] == "interval" for e in mine)


def test_jobs_are_clients_with_json_stream_and_bounded() -> None:
    base = ["-c", "10.0.0.2", "--objects", "0:1000", "--json-stream"]
    for args, needle in ((["--job", "a", *base, "--job", "a", *base], "named twice"),
                         (["--job", "a", "-s", "--json-stream"], "a job is a client"),
                         (["--job", "a", "-c", "10.0.0.2", "--objects", "0:1000"], "--json-stream"),
                         (["--job", "a", *base, "--job", "b", *base, "--ttl", "9"],
                          "the same for every job"),
                         # one block of local ports for the process: a later job's own
                         # --cport would be ignored, so it is refused
                         (["--job", "a", *base, "--job", "b", *base, "--cport", "7000"],
                          "the same for every job"),
                         ([x for i in range(17) for x in ("--job", f"j{i}", *base)],
                          "at most 16 jobs"),
                         (["--job", "a b", *base], "letters, digits")):
        p = subprocess.run([str(tool("xcpperf")), *args], check=False, capture_output=True,
                           text=True)
        assert p.returncode == 2, args
        assert needle in p.stderr, (args, p.stderr)

"""Each xcpperf process's kernel port filter (host-image/src/io/raw_socket.hh): on a host
where a bulk transfer runs, clients started late receive only their own segments; with
--no-port-filter the same client also receives (and discards) the bulk transfer's ACKs.
Seed 003's complex scenario lost its late FTP clients to exactly that copying (issue 17)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kernel_router import kernel_router, xcpperf_built

pytestmark = pytest.mark.skipif(not xcpperf_built(), reason="xcpperf not built (make build)")

LATE_BYTES = 2_000_000
MSS = 1424


def _end(proc: Any) -> dict[str, Any]:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    doc = json.loads(out)
    return dict(doc["end"])


@pytest.mark.root
def test_late_clients_receive_only_their_own_segments(topology: Any) -> None:
    topo = kernel_router(topology, tbf_mbit=50)
    h2 = topo.addr("h2")
    topo.xcpperf_server("h2", "-p", "5301")
    filtered_server = topo.xcpperf_server("h2", "-p", "5302", "-1")
    topo.xcpperf_server("h2", "-p", "5303")
    bulk = topo.xcpperf("h1", "-c", h2, "-p", "5301", "-t", "3", "-P", "2", "--cport", "40000",
                        "--cc", "newreno", "-i", "0", "--json")
    time.sleep(1.0)  # the bulk transfer's ACKs now stream into h1
    common = ["-c", h2, "-n", str(LATE_BYTES), "-P", "4", "--cc", "newreno", "-i", "0", "--json"]
    late = topo.xcpperf("h1", *common, "-p", "5302", "--cport", "41000")
    late_unfiltered = topo.xcpperf("h1", *common, "-p", "5303", "--cport", "42000",
                                   "--no-port-filter")

    rx = _end(late)["rx"]
    rx_unfiltered = _end(late_unfiltered)["rx"]
    rx_bulk = _end(bulk)["rx"]
    assert rx["port_filter"] is True and rx_unfiltered["port_filter"] is False
    # Filtered: nothing for other processes' ports reaches it (what was queued
    # before the filter is discarded), only its own ACKs: about one per segment,
    # more with duplicate ACKs at the tbf's losses.
    assert rx["not_ours"] == 0, rx
    assert 0 < rx["packets"] <= 4 * LATE_BYTES // MSS, rx
    assert rx["socket_drops"] == 0, rx
    # Unfiltered, the same client took copies of the bulk's and the other late client's ACKs.
    assert rx_unfiltered["not_ours"] > 100, rx_unfiltered
    assert rx_bulk["not_ours"] == 0, rx_bulk

    filtered_server.wait(timeout=30)  # -1: exits once its one client is done
    assert filtered_server.stderr is not None
    events = [json.loads(line) for line in filtered_server.stderr.read().splitlines()
              if line.startswith('{"data"')]
    server_rx = [e["data"] for e in events if e.get("event") == "rx"]
    assert server_rx, events
    assert server_rx[0]["port_filter"] is True and server_rx[0]["not_ours"] == 0, server_rx

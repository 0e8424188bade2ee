"""ns-2 samples (script.py's `L` and `F` lines) -> metrics/link.csv and flow.csv rows.

Columns are the emulator's (xcplab_contract/columns.py), in the same units:
- link: cumulative counters from the direction's queue monitor; rate and
  utilisation per interval (empty on the first sample, as the engine's);
  drops_loss from the error model's own counter; TTL/route/malformed/link-down
  drops cannot happen in the script and are 0; XCP controller state is not
  readable from ns-2's Tcl and is left empty.
- flow: bytes = payload acknowledged (ack_ x packetSize_), cwnd in bytes
  (cwnd_ x packetSize_), srtt from ns-2's scaled t_srtt_ (x tcpTick_ / 8),
  retransmits = nrexmitpack_, timeouts = nrexmit_ (retransmission timeouts).
  A flow has rows from its start to its stop; stream numbers start at 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from xcplab_contract.errors import XcplabError

SRTT_SCALE = 8  # ns-2 Agent/TCP T_SRTT_BITS = 3: t_srtt_ is srtt x 8, in tcpTick_ units


def parse_samples(lines: Iterable[str], mapping: dict[str, Any]
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(link rows, flow rows) from the samples file of a run of script.py's script."""
    dirs = {d["index"]: d for d in mapping["directions"]}
    flows = {f["index"]: f for f in mapping["flows"]}
    links: list[dict[str, Any]] = []
    flow_rows: list[dict[str, Any]] = []
    prev_tx: dict[int, tuple[float, float]] = {}
    prev_bytes: dict[tuple[int, int], tuple[float, float]] = {}
    for n, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        try:
            if parts[0] == "L" and len(parts) == 11:
                links.append(_link_row(parts, dirs, prev_tx))
            elif parts[0] == "F" and len(parts) == 10:
                row = _flow_row(parts, flows, prev_bytes)
                if row is not None:
                    flow_rows.append(row)
            else:
                raise ValueError("unknown record")
        except (ValueError, KeyError) as e:
            raise XcplabError(f"ns-2 samples line {n}: {line.strip()!r}: {e}") from e
    return links, flow_rows


def _link_row(p: list[str], dirs: dict[int, dict[str, Any]],
              prev: dict[int, tuple[float, float]]) -> dict[str, Any]:
    t, i = float(p[1]), int(p[2])
    barr, parr, bdep, pdep, pdrops, qbytes, qpkts, lost = (int(float(v)) for v in p[3:11])
    d = dirs[i]
    cap = d["capacity_bps"]
    rate = util = None
    if i in prev and t > prev[i][0]:
        rate = (bdep - prev[i][1]) * 8 / (t - prev[i][0])
        util = rate / cap if cap else None
    prev[i] = (t, bdep)
    return {"t_s": t, "node": d["node"], "port": d["port"], "link": d["link"],
            "capacity_bps": cap, "tx_bytes": bdep, "tx_packets": pdep, "rx_bytes": barr,
            "rx_packets": parr, "rate_bps": rate, "utilization": util, "queue_pkts": qpkts,
            "queue_bytes": qbytes, "drops_queue": pdrops, "drops_loss": lost,
            "drops_ttl": 0, "drops_noroute": 0, "drops_malformed": 0, "drops_link_down": 0}


def _flow_row(p: list[str], flows: dict[int, dict[str, Any]],
              prev: dict[tuple[int, int], tuple[float, float]]) -> dict[str, Any] | None:
    t, fi, s = float(p[1]), int(p[2]), int(p[3])
    ack, cwnd, t_srtt = float(p[4]), float(p[5]), float(p[6])
    rexmit_pkts, timeouts, tick = int(float(p[7])), int(float(p[8])), float(p[9])
    f = flows[fi]
    stop = f["stop_s"]
    if t < f["start_s"] or (stop is not None and t > stop + 1e-9):
        return None
    size = f["packetSize_"]
    acked = max(0.0, ack) * size
    rate = None
    key = (fi, s)
    if key in prev and t > prev[key][0]:
        rate = (acked - prev[key][1]) * 8 / (t - prev[key][0])
    prev[key] = (t, acked)
    srtt_us = t_srtt / SRTT_SCALE * tick * 1e6 if t_srtt > 0 else None
    return {"t_s": t, "flow": f["id"], "stream": s, "proto": f["proto"], "src": f["src"],
            "dst": f["dst"], "bytes": int(acked), "throughput_bps": rate,
            "cwnd_bytes": cwnd * size, "srtt_us": srtt_us, "retransmits": rexmit_pkts,
            "timeouts": timeouts, "feedback_bytes": None}

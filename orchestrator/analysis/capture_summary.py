"""What a run's packet captures show (`xcplab capture RUN`, docs/captures.md): per
capture and flow, packets, bytes and rate, and the XCP feedback over time.

Packets are attributed to the plan's flows by addresses and the server port
(data: src_addr -> dst_addr towards the port; ACKs the other way); anything else
is listed as "other". Times are seconds on the run's timeline (0 = the run's start,
captures/index.json `t0_unix`); each capture is trimmed to its window.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.wire.pcap import read_xcp_packets
from orchestrator.wire.xcp_header import Format
from xcplab_contract.errors import XcplabError

NEXT_PROTO_TRANSPORT = 254  # host-image/src/transport/segment.hh kNextProtoTransport
_PORTS = struct.Struct("!HH")


@dataclass
class FlowStats:
    flow: str
    direction: str  # "data" | "ack"
    packets: int = 0
    bytes: int = 0  # IPv4 total length, as sent
    first_s: float = math.inf
    last_s: float = -math.inf
    feedback_sum: float = 0.0  # H_feedback of Standard packets
    feedback_n: int = 0
    feedback_neg: int = 0
    feedback_min: int | None = None
    feedback_max: int | None = None
    cwnd_sum: float = 0.0
    reverse_feedback_sum: int = 0
    # per time bin: [n, sum H_feedback, sum H_cwnd, sum H_reverse_feedback, bytes]
    bins: dict[int, list[float]] = field(default_factory=dict)

    def to_dict(self, interval_s: float) -> dict[str, Any]:
        dur = self.last_s - self.first_s if self.packets > 1 else 0.0
        return {
            "flow": self.flow, "direction": self.direction, "packets": self.packets,
            "bytes": self.bytes, "first_s": _r(self.first_s), "last_s": _r(self.last_s),
            "mbps": round(self.bytes * 8 / dur / 1e6, 3) if dur > 0 else None,
            "feedback_mean": (round(self.feedback_sum / self.feedback_n, 1)
                              if self.feedback_n else None),
            "feedback_min": self.feedback_min, "feedback_max": self.feedback_max,
            "feedback_negative_fraction": (round(self.feedback_neg / self.feedback_n, 4)
                                           if self.feedback_n else None),
            "cwnd_mean": round(self.cwnd_sum / self.feedback_n) if self.feedback_n else None,
            "reverse_feedback_sum": self.reverse_feedback_sum,
            "over_time": [{"t_s": _r(k * interval_s), "packets": int(b[0]),
                           "mbps": round(b[4] * 8 / interval_s / 1e6, 3),
                           "feedback_mean": round(b[1] / b[0], 1) if b[0] else None,
                           "cwnd_mean": round(b[2] / b[0]) if b[0] else None,
                           "reverse_feedback_sum": int(b[3])}
                          for k, b in sorted(self.bins.items())],
        }


def _r(x: float) -> float | None:
    return round(x, 6) if math.isfinite(x) else None


def _flow_keys(plan: dict[str, Any]) -> dict[tuple[str, str, int], tuple[str, str]]:
    """(src, dst, server port) -> (flow id, direction) for the plan's flows."""
    out: dict[tuple[str, str, int], tuple[str, str]] = {}
    for f in plan.get("flows", []):
        for k in range(int(f.get("parallel") or 1)):
            port = int(f["port"]) + k
            out.setdefault((f["src_addr"], f["dst_addr"], port), (f["id"], "data"))
            out.setdefault((f["dst_addr"], f["src_addr"], port), (f["id"], "ack"))
    return out


def summarise_capture(path: Path, plan: dict[str, Any], t0_unix: float | None,
                      window: tuple[float, float | None], interval_s: float,
                      ) -> list[FlowStats]:
    keys = _flow_keys(plan)
    stats: dict[tuple[str, str], FlowStats] = {}
    w0, w1 = window
    for p in read_xcp_packets(path):
        t = p.time_s - t0_unix if t0_unix is not None else p.time_s
        if t < w0 or (w1 is not None and t > w1):
            continue
        flow, direction = "other", "-"
        h = p.result.header if p.result.ok else None
        if h is not None and h.next_protocol == NEXT_PROTO_TRANSPORT \
                and len(p.after_shim) >= _PORTS.size:
            sport, dport = _PORTS.unpack_from(p.after_shim)
            flow, direction = keys.get((p.src, p.dst, dport)) or keys.get(
                (p.src, p.dst, sport)) or (f"{p.src}:{sport}>{p.dst}:{dport}", "-")
        s = stats.get((flow, direction))
        if s is None:
            s = stats[(flow, direction)] = FlowStats(flow, direction)
        s.packets += 1
        s.bytes += p.ip_len
        s.first_s, s.last_s = min(s.first_s, t), max(s.last_s, t)
        b = s.bins.setdefault(int(t // interval_s), [0, 0.0, 0.0, 0.0, 0.0])
        b[4] += p.ip_len
        if h is None:
            continue
        s.reverse_feedback_sum += h.reverse_feedback_bytes
        b[3] += h.reverse_feedback_bytes
        if h.format == Format.STANDARD:
            fb = h.feedback_bytes
            s.feedback_sum += fb
            s.feedback_n += 1
            s.feedback_neg += fb < 0
            s.feedback_min = fb if s.feedback_min is None else min(s.feedback_min, fb)
            s.feedback_max = fb if s.feedback_max is None else max(s.feedback_max, fb)
            s.cwnd_sum += h.cwnd_bytes
            b[0] += 1
            b[1] += fb
            b[2] += h.cwnd_bytes
    return sorted(stats.values(), key=lambda s: (s.flow == "other", s.flow, s.direction))


def summarise_run(run_dir: Path, interval_s: float = 0.5,
                  only: str | None = None) -> dict[str, Any]:
    """Every capture of a run (captures/index.json), or the one named `only`."""
    index_path = run_dir / "captures" / "index.json"
    try:
        index = json.loads(index_path.read_text())
    except FileNotFoundError:
        raise XcplabError(f"{run_dir}: no captures (captures/index.json); add a captures: "
                          "section to the spec (docs/captures.md)") from None
    plan = json.loads((run_dir / "plan.json").read_text())
    caps = index.get("captures", [])
    if only is not None:
        caps = [c for c in caps if c["id"] == only]
        if not caps:
            known = ", ".join(c["id"] for c in index.get("captures", []))
            raise XcplabError(f"no capture {only!r} in {run_dir.name}; captures: {known}")
    out = []
    for c in caps:
        path = run_dir / c["file"]
        flows = summarise_capture(path, plan, index.get("t0_unix"),
                                  (c.get("window_start_s") or 0.0, c.get("window_stop_s")),
                                  interval_s) if path.exists() else []
        out.append({"id": c["id"], "file": c["file"], "link": c["link"],
                    "direction": c["direction"], "taken_at": f"{c['node']}:{c['ifname']}",
                    "packets_written": c.get("packets"), "dropped": c.get("dropped"),
                    "file_bytes": c.get("file_bytes"),
                    "flows": [f.to_dict(interval_s) for f in flows]})
    return {"run": run_dir.name, "interval_s": interval_s, "captures": out}


def plot_feedback(summary: dict[str, Any], png: Path) -> None:
    """Mean H_feedback and H_cwnd of data packets per interval, one line per flow."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    caps = summary["captures"]
    fig, axes = plt.subplots(len(caps), 2, figsize=(11, 3.2 * len(caps)), squeeze=False)
    for row, cap in zip(axes, caps, strict=True):
        for f in cap["flows"]:
            if f["direction"] != "data" or f["feedback_mean"] is None:
                continue
            pts = [(b["t_s"], b["feedback_mean"], b["cwnd_mean"]) for b in f["over_time"]
                   if b["feedback_mean"] is not None]
            if not pts:
                continue
            t, fb, cwnd = zip(*pts, strict=True)
            row[0].plot(t, fb, label=f["flow"], drawstyle="steps-post")
            row[1].plot(t, [c / 1000 for c in cwnd], label=f["flow"], drawstyle="steps-post")
        row[0].axhline(0, color="grey", lw=0.5)
        row[0].set(title=f"{cap['id']}: mean H_feedback (B)", xlabel="t (s)")
        row[1].set(title=f"{cap['id']}: mean H_cwnd (KB)", xlabel="t (s)")
        for ax in row:
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=8)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=100)
    plt.close(fig)

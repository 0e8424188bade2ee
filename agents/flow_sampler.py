"""Per-flow samples.

- Kernel TCP (iperf3): the sender's sockets are read through sock_diag
  (INET_DIAG_INFO = struct tcp_info) in the client's namespace every interval —
  exact cumulative bytes_acked, cwnd, srtt, retransmits and (Linux >= 6.7,
  tcpi_total_rto) retransmission timeouts without touching the tool. iperf3's
  control connection is skipped: on a sending client it is the only socket that
  receives payload (the server's state bytes), while data streams receive only
  ACKs. (Inode order does not tell: Linux hands out inode
  numbers in per-CPU batches, so the first socket may have the higher inode.)
- xcpperf: its live JSON-lines output (one object per stream per interval) is
  read from the client's stdout by a thread; the latest line per stream is kept.
- UDP (iperf3 -u): no kernel state worth sampling; rows come from iperf3's
  final JSON intervals when the client exits.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import IO, Any

from agents import netlink
from agents.line_pump import json_object, pump_lines

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
INET_DIAG_INFO = 2
TCP_ESTABLISHED_MASK = 1 << 1
_DIAG_MSG = struct.Struct("=BBBBHH16s16sIQIIIII")  # inet_diag_msg, ports big-endian
# struct tcp_info offsets (linux/tcp.h): snd_mss, rtt, snd_cwnd, total_retrans, bytes_acked
_TI_MSS, _TI_RTT, _TI_CWND, _TI_RETRANS, _TI_ACKED, _TI_RECEIVED = 16, 68, 80, 100, 120, 128
# __u16 tcpi_total_rto (Linux >= 6.7): right after __u32 tcpi_rehash at 236. Older
# kernels return a shorter tcp_info (sock_diag copies only what the kernel has).
_TI_TOTAL_RTO = 240


def total_rto(info: bytes) -> int | str:
    """RTOs the socket has had (SYN ones included), or "" if this kernel does not say."""
    if len(info) < _TI_TOTAL_RTO + 2:
        return ""
    return int(struct.unpack_from("=H", info, _TI_TOTAL_RTO)[0])


def data_streams(socks: list[tuple[int, int, int, bytes]]) -> list[tuple[int, int, int, bytes]]:
    """The iperf3 client's data sockets among `socks` (inode, sport, dport, tcp_info).

    The control connection is the one that has received payload; if none or all
    have (e.g. a bidirectional test), the socket with the fewest bytes acked is
    taken as control when there is more than one.
    """
    def received(s: tuple[int, int, int, bytes]) -> int:
        return int(struct.unpack_from("=Q", s[3], _TI_RECEIVED)[0])

    def acked(s: tuple[int, int, int, bytes]) -> int:
        return int(struct.unpack_from("=Q", s[3], _TI_ACKED)[0])

    quiet = [s for s in socks if received(s) == 0]
    if quiet and len(quiet) < len(socks):
        return quiet
    if len(socks) <= 1:
        return []  # a lone socket is the control connection before/after the streams
    control = min(socks, key=acked)
    return [s for s in socks if s is not control]


@dataclass
class StreamSample:
    stream: str
    bytes: int
    cwnd_bytes: int | str = ""
    srtt_us: int | str = ""
    retransmits: int | str = ""
    feedback_bytes: int | str = ""
    timeouts: int | str = ""  # retransmission timeouts, cumulative; "" = not reported


class TcpDiag:
    """A raw NETLINK_SOCK_DIAG socket; it belongs to the namespace it was created in."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
        self.sock.bind((0, 0))
        self.seq = 0

    def _dump(self) -> list[tuple[int, int, int, bytes]]:
        """(inode, sport, dport, tcp_info bytes) of every established IPv4 TCP socket."""
        self.seq += 1
        req = struct.pack("=BBBBI", socket.AF_INET, socket.IPPROTO_TCP, 1 << (INET_DIAG_INFO - 1),
                          0, TCP_ESTABLISHED_MASK) + b"\0" * 48
        out: list[tuple[int, int, int, bytes]] = []
        for msg in netlink.dump(self.sock, SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP,
                                self.seq, req, "sock_diag dump"):
            f = _DIAG_MSG.unpack_from(msg, 16)
            sport, dport, inode = socket.ntohs(f[4]), socket.ntohs(f[5]), f[14]
            info = b""
            for atyp, value in netlink.attributes(msg, 16 + _DIAG_MSG.size):
                if atyp == INET_DIAG_INFO:
                    info = value
            out.append((inode, sport, dport, info))
        return out

    def streams(self, dport: int) -> list[StreamSample]:
        socks = sorted((s for s in self._dump() if s[2] == dport and len(s[3]) >= 136),
                       key=lambda s: s[1])
        data = data_streams(socks)
        out: list[StreamSample] = []
        for _inode, sport, _dport, info in data:
            mss, rtt, cwnd, retrans = (struct.unpack_from("=I", info, o)[0]
                                       for o in (_TI_MSS, _TI_RTT, _TI_CWND, _TI_RETRANS))
            acked = struct.unpack_from("=Q", info, _TI_ACKED)[0]
            out.append(StreamSample(stream=str(sport), bytes=acked, cwnd_bytes=cwnd * mss,
                                    srtt_us=rtt, retransmits=retrans, timeouts=total_rto(info)))
        return out

    def close(self) -> None:
        self.sock.close()


@dataclass
class XcpperfReader:
    """Cumulative per-stream state from an xcpperf client's `--json-stream` output.

    host-image/README.md: one `{"event":"interval","data":{"streams":[...]}}` line per
    interval as it happens; per stream `bytes`/`retransmits`/`feedback_bytes` are
    per interval, `cwnd` (bytes) and `srtt_us` instantaneous. Here bytes,
    retransmits and timeouts are summed into cumulative counters (timeouts stay ""
    while the binary does not report them); feedback is the last interval's.
    """

    latest: dict[str, StreamSample] = field(default_factory=dict)
    objects: list[dict[str, Any]] = field(default_factory=list)  # --objects: as they end
    final: dict[str, Any] | None = None
    error: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    bad_lines: int = 0

    def feed(self, line: str) -> None:
        obj, bad = json_object(line)
        self.bad_lines += bad
        if obj is None:
            return
        event = obj.get("event")
        if event == "end":
            self.final = obj.get("data")
        elif event == "error":
            self.error = str(obj.get("data"))
        elif event == "object" and isinstance(obj.get("data"), dict):
            with self.lock:
                self.objects.append(obj["data"])
        elif event == "interval":
            for st in (obj.get("data") or {}).get("streams", []):
                self._interval(st)

    def _interval(self, st: dict[str, Any]) -> None:
        key = str(st.get("socket", 0))
        with self.lock:
            prev = self.latest.get(key)
            total = (prev.bytes if prev else 0) + int(st.get("bytes", 0))
            retr = (int(prev.retransmits) if prev and prev.retransmits != "" else 0) \
                + int(st.get("retransmits", 0) or 0)
            timeouts: int | str = prev.timeouts if prev else ""
            if st.get("timeouts") is not None:
                timeouts = (int(timeouts) if timeouts != "" else 0) + int(st["timeouts"])
            self.latest[key] = StreamSample(
                stream=key, bytes=total, cwnd_bytes=st.get("cwnd", ""),
                srtt_us=st.get("srtt_us", ""), retransmits=retr,
                feedback_bytes=st.get("feedback_bytes", ""), timeouts=timeouts)

    def pump(self, stream: IO[bytes], tee: IO[bytes] | None = None) -> threading.Thread:
        """Read lines in a thread; `tee` keeps a copy of the raw output (logs/)."""
        return pump_lines(stream, self.feed, "xcpperf-reader", tee)

    def object_results(self) -> list[dict[str, Any]]:
        """Every object of an --objects client: the end section's list (all of them,
        unfinished ones included) once it arrived, else those reported so far."""
        final = self.final.get("objects") if isinstance(self.final, dict) else None
        with self.lock:
            return list(final) if isinstance(final, list) else list(self.objects)

    def snapshot(self) -> list[StreamSample]:
        with self.lock:
            return list(self.latest.values())


def iperf3_interval_rows(final_json: str) -> list[tuple[float, StreamSample]]:
    """(end-of-interval seconds since client start, cumulative sample) per stream."""
    try:
        doc = json.loads(final_json)
    except json.JSONDecodeError:
        return []
    totals: dict[str, int] = {}
    retr: dict[str, int] = {}
    out = []
    for iv in doc.get("intervals", []):
        for s in iv.get("streams", []):
            key = str(s.get("socket", 0))
            totals[key] = totals.get(key, 0) + int(s.get("bytes", 0))
            retr[key] = retr.get(key, 0) + int(s.get("retransmits", 0) or 0)
            out.append((float(s.get("end", 0.0)), StreamSample(
                stream=key, bytes=totals[key],
                cwnd_bytes=s.get("snd_cwnd", ""), srtt_us=s.get("rtt", ""),
                retransmits=retr[key])))
    return out

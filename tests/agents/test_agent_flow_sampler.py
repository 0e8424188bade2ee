"""Flow samples: iperf3 final JSON intervals, xcpperf live lines, sock_diag on loopback."""

from __future__ import annotations

import json
import shutil
import socket
import struct
import subprocess
import time

import pytest

from agents.flow_sampler import (
    TcpDiag,
    XcpperfReader,
    data_streams,
    iperf3_interval_rows,
    total_rto,
)


def test_iperf3_intervals_become_cumulative_samples() -> None:
    doc = {"intervals": [
        {"streams": [{"socket": 5, "end": 0.1, "bytes": 1000, "retransmits": 1}]},
        {"streams": [{"socket": 5, "end": 0.2, "bytes": 500, "retransmits": 0}]}]}
    rows = iperf3_interval_rows(json.dumps(doc))
    assert [(t, s.bytes, s.retransmits) for t, s in rows] == [(0.1, 1000, 1), (0.2, 1500, 1)]
    assert iperf3_interval_rows("not json") == []


def test_xcpperf_reader_accumulates_interval_lines() -> None:
    r = XcpperfReader()

    def interval(sock: int, b: int, retr: int, cwnd: int) -> str:
        return json.dumps({"event": "interval", "data": {"streams": [
            {"socket": sock, "bytes": b, "retransmits": retr, "cwnd": cwnd, "srtt_us": 40000,
             "feedback_bytes": 12}], "sum": {}}})

    r.feed(json.dumps({"event": "start", "data": {"connected": []}}))
    r.feed(interval(3, 1000, 1, 3000))
    r.feed(interval(4, 50, 0, 1500))
    r.feed(interval(3, 400, 2, 4000))
    r.feed("garbage line")
    r.feed(json.dumps({"event": "end", "data": {"sum_sent": {"bytes": 1450}}}))
    snap = {s.stream: s for s in r.snapshot()}
    assert (snap["3"].bytes, snap["3"].retransmits, snap["3"].cwnd_bytes) == (1400, 3, 4000)
    assert snap["4"].bytes == 50 and snap["3"].feedback_bytes == 12
    assert r.final == {"sum_sent": {"bytes": 1450}}


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="needs iperf3")
def test_sock_diag_sees_a_loopback_transfer() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = subprocess.Popen(["iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    cli = subprocess.Popen(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", "2"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    diag = TcpDiag()
    try:
        time.sleep(0.8)
        a = diag.streams(port)
        time.sleep(0.3)
        b = diag.streams(port)
        assert len(a) == 1 and len(b) == 1  # control connection skipped
        assert b[0].bytes > a[0].bytes > 0  # cumulative bytes_acked grows
        assert b[0].bytes > 1_000_000  # the data stream, not the control connection
        assert isinstance(b[0].srtt_us, int)
        assert isinstance(b[0].cwnd_bytes, int) and b[0].cwnd_bytes > 0
    finally:
        diag.close()
        for p in (cli, srv):
            p.kill()
            p.wait()


def test_iperf3_final_totals_are_keyed_by_local_port_like_sock_diag() -> None:
    from agents.flow_control import iperf3_final_streams
    doc = {"start": {"connected": [{"socket": 5, "local_port": 41000},
                                   {"socket": 7, "local_port": 41002}]},
           "end": {"streams": [{"sender": {"socket": 5, "bytes": 9000, "retransmits": 2}},
                               {"sender": {"socket": 7, "bytes": 100}}]}}
    got = {s.stream: (s.bytes, s.retransmits) for s in iperf3_final_streams(json.dumps(doc))}
    assert got == {"41000": (9000, 2), "41002": (100, 0)}
    assert iperf3_final_streams("{}") == [] and iperf3_final_streams("") == []


def _info(acked: int, received: int) -> bytes:
    buf = bytearray(232)
    struct.pack_into("=QQ", buf, 120, acked, received)
    return bytes(buf)


def test_control_connection_is_told_by_received_payload_not_inode_order() -> None:
    # Inodes come from per-CPU batches: the control socket may have the higher one.
    control = (9000, 40001, 5201, _info(acked=300, received=12))
    stream = (17, 40002, 5201, _info(acked=5_000_000, received=0))
    assert [s[1] for s in data_streams([stream, control])] == [40002]
    assert [s[1] for s in data_streams([control, stream])] == [40002]
    assert data_streams([control]) == []  # lone socket: control before/after the streams
    # Bidirectional (every socket receives): the least-acked one is control.
    both = [(1, 1, 5201, _info(10_000_000, 5)), (2, 2, 5201, _info(200, 5))]
    assert [s[1] for s in data_streams(both)] == [1]


def test_total_rto_is_the_u16_after_tcpi_rehash() -> None:
    # struct tcp_info (include/uapi/linux/tcp.h, Linux >= 6.7): ... __u32 tcpi_rehash (236),
    # __u16 tcpi_total_rto (240), __u16 tcpi_total_rto_recoveries (242),
    # __u32 tcpi_total_rto_time (244); 248 bytes, 280 with 6.18's AccECN trailer.
    buf = bytearray(248)
    struct.pack_into("=IHHI", buf, 236, 0xFFFFFFFF, 7, 0xBEEF, 0xFFFFFFFF)
    assert total_rto(bytes(buf)) == 7  # neither neighbour leaks in
    struct.pack_into("=H", buf, 240, 65535)
    assert total_rto(bytes(buf)) == 65535  # unsigned
    assert total_rto(bytes(buf[:242])) == 65535  # exactly covers the field
    # an older kernel's shorter tcp_info: not reported, not 0
    assert total_rto(bytes(buf[:241])) == "" and total_rto(bytes(buf[:232])) == ""


def test_kernel_tcp_info_is_long_enough_for_total_rto() -> None:
    # This machine's kernel (6.18) returns the field; a fresh connection has had no RTO.
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen()
        with socket.create_connection(srv.getsockname()) as c:
            info = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 512)
            if len(info) < 242:
                pytest.skip(f"kernel tcp_info is {len(info)} bytes (< 6.7): no tcpi_total_rto")
            assert total_rto(info) == 0


def test_xcpperf_timeouts_accumulate_and_are_empty_when_absent() -> None:
    r = XcpperfReader()

    def interval(sock: int, **extra: int) -> str:
        return json.dumps({"event": "interval", "data": {"streams": [
            {"socket": sock, "bytes": 100, "retransmits": 1, **extra}]}})

    r.feed(interval(3, timeouts=1, fast_recoveries=2))
    r.feed(interval(3, timeouts=0))
    r.feed(interval(3, timeouts=2))
    r.feed(interval(4))  # an xcpperf that does not report timeouts
    r.feed(interval(4))
    snap = {s.stream: s for s in r.snapshot()}
    assert snap["3"].timeouts == 3 and snap["3"].retransmits == 3
    assert snap["4"].timeouts == "" and snap["4"].retransmits == 2
    # a field appearing later starts from 0, like retransmits
    r.feed(interval(4, timeouts=5))
    assert {s.stream: s for s in r.snapshot()}["4"].timeouts == 5

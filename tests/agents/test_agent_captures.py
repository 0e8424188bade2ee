"""The agent's capture commands (agents/captures.py), without a namespace."""

from __future__ import annotations

from pathlib import Path

from agents.captures import START_LEAD_S, STOP_MARGIN_S, capture_argv, parse_dumpcap_stats
from xcplab_contract.plan import Capture


def _cap(**kw) -> Capture:
    base = dict(id="r1-r2.a_to_b", link="r1-r2", direction="a_to_b", node="r2", ifname="eth0",
                snaplen_bytes=192, max_packets=None, max_bytes=64_000_000, start_s=0.0,
                stop_s=None, file="captures/r1-r2.a_to_b.pcapng")
    return Capture(**{**base, **kw})


def test_dumpcap_argv_budgets_and_direction():
    argv = capture_argv(_cap(), Path("/runs/x/captures/r1-r2.a_to_b.pcapng"),
                        "02:00:00:00:03:02", "/usr/bin/dumpcap")
    assert argv == ("/usr/bin/dumpcap", "-i", "eth0", "-s", "192",
                    "-f", "ether dst 02:00:00:00:03:02", "-a", "filesize:64000", "-q",
                    "-w", "/runs/x/captures/r1-r2.a_to_b.pcapng")
    with_packets = capture_argv(_cap(max_packets=500, max_bytes=10_500), Path("f"), "m")
    assert with_packets[-2:] == ("-c", "500")
    assert "filesize:10" in with_packets  # dumpcap counts kB of 1000 bytes, rounded down


def test_dumpcap_closing_counts():
    stderr = ("Capturing on 'eth0'\nFile: /x.pcapng\nPackets captured: 1240\n"
              "Packets received/dropped on interface 'eth0': 1241/1 (pcap:0/dumpcap:0/"
              "flushed:0/ps_ifdrop:0) (99.9%)\n")
    assert parse_dumpcap_stats(stderr) == {"packets": 1240, "received": 1241, "dropped": 1}
    assert parse_dumpcap_stats("dumpcap: killed\n") == {}


def test_stop_margin_is_short():
    assert 0.25 < STOP_MARGIN_S <= 0.5 and 0 < START_LEAD_S <= 0.2  # 250 ms read timeout

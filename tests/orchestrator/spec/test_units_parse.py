"""Unit parsing: what people write -> SI numbers, and the messages for typos."""

from __future__ import annotations

import pytest

from orchestrator import units
from orchestrator.units import Buffer


@pytest.mark.parametrize(("text", "bps"), [
    ("30Mbps", 30_000_000), ("1Gbps", 1_000_000_000), ("500kbps", 500_000),
    ("500Kbps", 500_000), ("100bps", 100), ("30 Mb/s", 30_000_000), ("2.5Mbit/s", 2_500_000),
    ("10mbit", 10_000_000), ("0.5Gbps", 500_000_000), ("1e3kbps", 1_000_000),
])
def test_rates(text: str, bps: int) -> None:
    assert units.parse_rate(text) == bps


@pytest.mark.parametrize(("value", "message"), [
    ("30Mbs", ("'30Mbs': unknown rate unit 'Mbs'; valid units: bps, kbps, Mbps, Gbps "
              "(also Mb/s, Mbit/s), e.g. 30Mbps")),
    ("30MBps", ("'30MBps' is a byte rate; rates are in bits: valid units bps, kbps, Mbps, Gbps "
               "(also Mb/s, Mbit/s), e.g. 30Mbps")),
    (30, ("30 has no unit; a rate needs one: 30Mbps (valid units: bps, kbps, Mbps, Gbps "
         "(also Mb/s, Mbit/s), e.g. 30Mbps)")),
    ("0Mbps", "'0Mbps': a rate must be > 0"),
    ("fast", ("'fast' is not a rate: write a number and a unit (bps, kbps, Mbps, Gbps "
             "(also Mb/s, Mbit/s), e.g. 30Mbps)")),
    (True, "expected a rate such as 30Mbps, got True"),
])
def test_rate_errors(value: object, message: str) -> None:
    with pytest.raises(ValueError) as e:
        units.parse_rate(value)
    assert str(e.value) == message


@pytest.mark.parametrize(("text", "seconds"), [
    ("10ms", 0.01), ("1.5s", 1.5), ("250us", 250e-6), ("2min", 120.0), ("0s", 0.0),
    ("100 ms", 0.1), ("5sec", 5.0), ("40ns", 40e-9),
])
def test_durations(text: str, seconds: float) -> None:
    assert units.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("value", "fragment"), [
    (10, "10 has no unit; a duration needs one: 10s"),
    ("10mins", "unknown duration unit 'mins'"),
    ("-1s", "a duration must be >= 0"),
])
def test_duration_errors(value: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        units.parse_duration(value)


@pytest.mark.parametrize(("text", "n"), [
    ("64KB", 64_000), ("64kB", 64_000), ("1MiB", 1_048_576), ("1500B", 1500),
    ("2GB", 2_000_000_000), ("10 MB", 10_000_000), ("3bytes", 3),
])
def test_sizes(text: str, n: int) -> None:
    assert units.parse_size(text) == n


def test_size_in_bits_is_refused() -> None:
    with pytest.raises(ValueError, match="'kb' reads as bits; sizes are in bytes"):
        units.parse_size("64kb")


@pytest.mark.parametrize(("text", "buf"), [
    ("100pkts", Buffer("packets", 100)), ("1pkt", Buffer("packets", 1)),
    ("20packets", Buffer("packets", 20)), ("64KB", Buffer("bytes", 64_000)),
    ("0.5BDP", Buffer("bdp", 0.5)), ("1BDP", Buffer("bdp", 1.0)), ("2bdp", Buffer("bdp", 2.0)),
])
def test_buffers(text: str, buf: Buffer) -> None:
    assert units.parse_buffer(text) == buf


@pytest.mark.parametrize(("value", "fragment"), [
    ("1.5pkts", "a packet count must be a whole number >= 1"),
    ("0BDP", "a BDP fraction must be > 0"),
    ("10frames", ("unknown buffer unit 'frames'; valid: packets (100pkts), bytes (64KB, 1MiB) "
                 "or a fraction of the path BDP (0.5BDP)")),
    (100, "100 has no unit; a buffer needs one: 100pkts"),
    ("64kb", "reads as bits"),
])
def test_buffer_errors(value: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        units.parse_buffer(value)


@pytest.mark.parametrize(("value", "p"), [
    ("1%", 0.01), ("0.5 %", 0.005), ("100%", 1.0), (0.02, 0.02), (0, 0.0), ("0.3", 0.3),
])
def test_probabilities(value: object, p: float) -> None:
    assert units.parse_probability(value) == pytest.approx(p)


@pytest.mark.parametrize(("value", "fragment"), [
    ("150%", "within 0..1"), (2, "within 0..1"), ("1pct", "unknown unit 'pct'"),
])
def test_probability_errors(value: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        units.parse_probability(value)


@pytest.mark.parametrize(("fmt", "value", "text"), [
    (units.fmt_rate, 30e6, "30Mbps"), (units.fmt_rate, 1.5e9, "1.5Gbps"),
    (units.fmt_duration, 0.01, "10ms"), (units.fmt_duration, 20.0, "20s"),
    (units.fmt_size, 150_000, "150KB"),
])
def test_formatting(fmt: object, value: float, text: str) -> None:
    assert fmt(value) == text  # type: ignore[operator]

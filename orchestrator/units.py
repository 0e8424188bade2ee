"""Quantities as people write them in specs: `30Mbps`, `10ms`, `64KB`, `1%`, `0.5BDP`.

Every parser takes the user's text (or a number where a bare number is
unambiguous) and returns SI base units: bits/s (int), seconds (float), bytes
(int), probabilities (float in [0, 1]). Errors are ValueError with a message
that names the valid units, so the spec validator can show it verbatim.

Decimal prefixes are decimal (k = 1000): `1Gbps` = 1e9 bit/s, `64KB` = 64000
bytes; binary sizes are written `KiB`/`MiB`/`GiB`. A bare number is refused
for rates, durations and sizes (is `10` ms or s?) — the message shows the fix.
Parsers raise ValueError even for wrong types: pydantic reports only ValueError.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

_NUM = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([^\d\s].*?)?\s*$")

RATE_UNITS: dict[str, int] = {
    "bps": 1, "kbps": 10**3, "mbps": 10**6, "gbps": 10**9, "tbps": 10**12,
    "b/s": 1, "kb/s": 10**3, "mb/s": 10**6, "gb/s": 10**9,
    "bit/s": 1, "kbit/s": 10**3, "mbit/s": 10**6, "gbit/s": 10**9,
    "bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9,
}
RATE_HELP = "bps, kbps, Mbps, Gbps (also Mb/s, Mbit/s), e.g. 30Mbps"

DURATION_UNITS: dict[str, float] = {
    "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "min": 60.0,
}
DURATION_HELP = "ns, us, ms, s, min, e.g. 10ms or 20s"

SIZE_UNITS: dict[str, int] = {
    "B": 1, "bytes": 1, "KB": 10**3, "kB": 10**3, "MB": 10**6, "GB": 10**9,
    "KiB": 2**10, "MiB": 2**20, "GiB": 2**30,
}
SIZE_HELP = "B, KB, MB, GB (decimal) or KiB, MiB, GiB, e.g. 64KB"

PACKET_UNITS = ("pkts", "pkt", "packets", "packet", "p")
BUFFER_HELP = "packets (100pkts), bytes (64KB, 1MiB) or a fraction of the path BDP (0.5BDP)"


def _split(text: str, what: str, help_: str) -> tuple[float, str]:
    m = _NUM.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a {what}: write a number and a unit ({help_})")
    value = float(m.group(1))
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite {what}")
    return value, (m.group(2) or "")


def _bare_number_error(value: float, what: str, example_unit: str, help_: str) -> ValueError:
    shown = int(value) if float(value).is_integer() else value
    return ValueError(f"{shown} has no unit; a {what} needs one: {shown}{example_unit} "
                      f"(valid units: {help_})")


def parse_rate(value: object) -> int:
    """`30Mbps` -> 30_000_000 bit/s. Must be > 0."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"expected a rate such as 30Mbps, got {value!r}")  # noqa: TRY004
    if not isinstance(value, str):
        raise _bare_number_error(value, "rate", "Mbps", RATE_HELP)
    number, unit = _split(value, "rate", RATE_HELP)
    if not unit:
        raise _bare_number_error(number, "rate", "Mbps", RATE_HELP)
    if unit.endswith(("Bps", "B/s")):
        raise ValueError(f"{value!r} is a byte rate; rates are in bits: "
                         f"valid units {RATE_HELP}")
    factor = RATE_UNITS.get(unit.lower())
    if factor is None:
        raise ValueError(f"{value!r}: unknown rate unit {unit!r}; valid units: {RATE_HELP}")
    bps = round(number * factor)
    if bps <= 0:
        raise ValueError(f"{value!r}: a rate must be > 0")
    return bps


def parse_duration(value: object) -> float:
    """`10ms` -> 0.01 s. Must be >= 0."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"expected a duration such as 10ms, got {value!r}")  # noqa: TRY004
    if not isinstance(value, str):
        raise _bare_number_error(value, "duration", "s", DURATION_HELP)
    number, unit = _split(value, "duration", DURATION_HELP)
    if not unit:
        raise _bare_number_error(number, "duration", "s", DURATION_HELP)
    factor = DURATION_UNITS.get(unit)
    if factor is None:
        raise ValueError(f"{value!r}: unknown duration unit {unit!r}; valid units: "
                         f"{DURATION_HELP}")
    if number < 0:
        raise ValueError(f"{value!r}: a duration must be >= 0")
    return number * factor


def parse_size(value: object) -> int:
    """`64KB` -> 64000 bytes. Must be >= 0."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"expected a size such as 64KB, got {value!r}")  # noqa: TRY004
    if not isinstance(value, str):
        raise _bare_number_error(value, "size", "B", SIZE_HELP)
    number, unit = _split(value, "size", SIZE_HELP)
    if not unit:
        raise _bare_number_error(number, "size", "B", SIZE_HELP)
    factor = SIZE_UNITS.get(unit)
    if factor is None:
        if unit.lower() in ("kb", "mb", "gb", "b") or unit.lower().endswith("bit"):
            raise ValueError(f"{value!r}: {unit!r} reads as bits; sizes are in bytes: "
                             f"{SIZE_HELP}")
        raise ValueError(f"{value!r}: unknown size unit {unit!r}; valid units: {SIZE_HELP}")
    if number < 0:
        raise ValueError(f"{value!r}: a size must be >= 0")
    return round(number * factor)


def parse_probability(value: object) -> float:
    """`1%` -> 0.01; a bare number is a probability in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"expected a probability such as 1% or 0.01, got {value!r}")  # noqa: TRY004
    if isinstance(value, str):
        number, unit = _split(value, "probability", "1% or 0.01")
        if unit == "%":
            number /= 100.0
        elif unit:
            raise ValueError(f"{value!r}: unknown unit {unit!r}; write a percentage (1%) "
                             "or a probability (0.01)")
    else:
        number = float(value)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{value!r}: a probability must be within 0..1 (0%..100%)")
    return number


@dataclass(frozen=True)
class Buffer:
    """A buffer size before the path RTT is known."""

    unit: Literal["packets", "bytes", "bdp"]
    value: float  # packets and bytes are whole numbers; bdp is a fraction

    def __str__(self) -> str:
        if self.unit == "packets":
            return f"{int(self.value)}pkts"
        if self.unit == "bytes":
            return f"{int(self.value)}B"
        return f"{self.value:g}BDP"


def parse_buffer(value: object) -> Buffer:
    """`100pkts`, `64KB`, `0.5BDP` (fraction of the path bandwidth-delay product)."""
    if isinstance(value, Buffer):
        return value
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"expected a buffer such as 100pkts, 64KB or 1BDP, got {value!r}")  # noqa: TRY004
    if not isinstance(value, str):
        raise _bare_number_error(value, "buffer", "pkts", BUFFER_HELP)
    number, unit = _split(value, "buffer", BUFFER_HELP)
    if not unit:
        raise _bare_number_error(number, "buffer", "pkts", BUFFER_HELP)
    if number < 0:
        raise ValueError(f"{value!r}: a buffer must be >= 0")
    if unit.lower() == "bdp":
        if number <= 0:
            raise ValueError(f"{value!r}: a BDP fraction must be > 0")
        return Buffer("bdp", number)
    if unit in PACKET_UNITS:
        if not number.is_integer() or number < 1:
            raise ValueError(f"{value!r}: a packet count must be a whole number >= 1")
        return Buffer("packets", number)
    if unit in SIZE_UNITS or unit.lower() in ("kb", "mb", "gb", "b"):
        size = parse_size(value)
        if size < 1:
            raise ValueError(f"{value!r}: a byte buffer must be >= 1B")
        return Buffer("bytes", size)
    raise ValueError(f"{value!r}: unknown buffer unit {unit!r}; valid: {BUFFER_HELP}")


# -- formatting for humans (plan tables, summaries) -------------------------

def fmt_rate(bps: float) -> str:
    for unit, f in (("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if bps >= f:
            return f"{bps / f:g}{unit}"
    return f"{bps:g}bps"


def fmt_duration(seconds: float) -> str:
    if seconds == 0:
        return "0s"
    if seconds >= 1:
        return f"{seconds:g}s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:g}ms"
    return f"{seconds * 1e6:g}us"


def fmt_size(n: float) -> str:
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= f:
            return f"{n / f:g}{unit}"
    return f"{n:g}B"

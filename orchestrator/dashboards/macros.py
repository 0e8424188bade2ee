"""Grafana's template substitution for InfluxQL, as its InfluxDB data source does it.

- Time range: `now`, `now-15m`, `now-2h/h` (rounded down), epoch milliseconds, or an ISO
  instant, resolved against an injected `now_ms`.
- `$__interval`: (to - from) / max data points, rounded to Grafana's steps
  (`round_interval`), never below the data source's min interval (`timeInterval`);
  `$__interval_ms`, `$interval` (the old name) beside it.
- `$timeFilter`: `time >= FROMms and time <= TOms` (Grafana's backend form);
  `$__from`, `$__to` (epoch ms), `$__range`, `$__range_s`, `$__range_ms`.
- Dashboard variables: `$name`, `${name}`, `${name:format}`, `[[name]]`. A value is
  regex-escaped by default (the InfluxDB data source's `interpolateQueryExpr` for a
  single value, so `"run" =~ /^$run$/` matches the run exactly); formats `raw`,
  `regex`, `csv`, `pipe`, `singlequote`, `doublequote`.
An unknown variable is left as written, as Grafana leaves it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# Grafana's variable syntax (public/app/features/templating: variableRegex).
VARIABLE_RE = re.compile(r"\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?::([^}]+))?\}")
_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000,
             "w": 604_800_000, "M": 2_592_000_000, "y": 31_536_000_000}
_RELATIVE = re.compile(r"^now(?:-(\d+)(ms|s|m|h|d|w|M|y))?(?:/(s|m|h|d))?$")
_DURATION = re.compile(r"^>?(\d+)(ms|s|m|h|d|w|M|y)$")
# Characters InfluxQL regexes treat specially (Grafana's influxRegularEscape), and '/'.
_REGEX_SPECIAL = re.compile(r"[\\^$*+?.()|\[\]{}/]")
BUILTINS = frozenset({"timeFilter", "__interval", "__interval_ms", "interval", "__from",
                      "__to", "__range", "__range_s", "__range_ms"})


class MacroError(ValueError):
    """A time range, interval or format Grafana would not accept either."""


@dataclass(frozen=True)
class TimeRange:
    from_ms: int
    to_ms: int

    def __post_init__(self) -> None:
        if self.to_ms < self.from_ms:
            raise MacroError(f"time range ends before it starts ({self.from_ms} > {self.to_ms})")


def parse_time(text: str, now_ms: int) -> int:
    """Grafana's `from`/`to`: now[-N unit][/unit], epoch ms, or ISO 8601 (UTC if naive)."""
    s = str(text).strip()
    if s.isdigit():
        return int(s)
    m = _RELATIVE.match(s)
    if m:
        t = now_ms - (int(m[1]) * _UNITS_MS[m[2]] if m[1] else 0)
        if m[3]:
            t -= t % _UNITS_MS[m[3]]
        return t
    try:
        when = dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise MacroError(f"time {s!r}: expected now, now-15m, now-1h/h, epoch ms or "
                         "an ISO 8601 instant") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


def time_range(from_: str, to: str, now_ms: int) -> TimeRange:
    return TimeRange(parse_time(from_, now_ms), parse_time(to, now_ms))


def duration_ms(text: str) -> int:
    """`100ms`, `5s`, `>1m` (Grafana's min-interval syntax) -> milliseconds."""
    m = _DURATION.match(str(text).strip())
    if not m:
        raise MacroError(f"interval {text!r}: expected a number and one of "
                         f"{', '.join(_UNITS_MS)} (e.g. 100ms, 5s)")
    return int(m[1]) * _UNITS_MS[m[2]]


# Grafana's rangeutil.roundInterval: (below this many ms, use this step).
_STEPS = ((15, 10), (35, 20), (75, 50), (150, 100), (350, 200), (750, 500), (1500, 1000),
          (3500, 2000), (7500, 5000), (12500, 10000), (17500, 15000), (25000, 20000),
          (45000, 30000), (90000, 60000), (210000, 120000), (450000, 300000),
          (750000, 600000), (1050000, 900000), (1500000, 1200000), (2700000, 1800000),
          (5400000, 3600000), (9000000, 7200000), (16200000, 10800000),
          (32400000, 21600000), (86400000, 43200000), (604800000, 86400000),
          (1814400000, 604800000), (3628800000, 2592000000))


def round_interval(ms: float) -> int:
    for below, step in _STEPS:
        if ms < below:
            return step
    return 31_536_000_000


def interval_ms(rng: TimeRange, max_data_points: int, min_interval_ms: int = 1) -> int:
    """Grafana's calculateInterval: the span per data point, rounded, at least the min."""
    if max_data_points < 1:
        raise MacroError(f"maxDataPoints must be >= 1, found {max_data_points}")
    return max(round_interval((rng.to_ms - rng.from_ms) / max_data_points), min_interval_ms)


def format_interval(ms: int) -> str:
    """InfluxQL duration text of MS, in the largest unit that divides it (1m, 200ms)."""
    for unit in ("y", "w", "d", "h", "m", "s"):
        if ms % _UNITS_MS[unit] == 0:
            return f"{ms // _UNITS_MS[unit]}{unit}"
    return f"{ms}ms"


def regex_escape(value: str) -> str:
    return _REGEX_SPECIAL.sub(lambda m: "\\" + m[0], value)


def regex_unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


_FORMATS: dict[str, Callable[[str], str]] = {
    "raw": lambda v: v, "regex": regex_escape, "csv": lambda v: v, "pipe": lambda v: v,
    "singlequote": lambda v: "'" + v.replace("'", "\\'") + "'",
    "doublequote": lambda v: '"' + v.replace('"', '\\"') + '"',
}


def format_value(value: str, fmt: str | None) -> str:
    if fmt is None:
        return regex_escape(value)  # the InfluxDB data source's default
    try:
        return _FORMATS[fmt](value)
    except KeyError:
        raise MacroError(f"variable format {fmt!r}: expected one of "
                         f"{', '.join(sorted(_FORMATS))}") from None


def builtin_values(rng: TimeRange, step_ms: int) -> dict[str, str]:
    span = rng.to_ms - rng.from_ms
    return {"timeFilter": f"time >= {rng.from_ms}ms and time <= {rng.to_ms}ms",
            "__interval": format_interval(step_ms), "interval": format_interval(step_ms),
            "__interval_ms": str(step_ms), "__from": str(rng.from_ms), "__to": str(rng.to_ms),
            "__range": format_interval(span) if span else "0s",
            "__range_s": str(span // 1000), "__range_ms": str(span)}


def interpolate(query: str, variables: Mapping[str, str], *, rng: TimeRange | None = None,
                step_ms: int | None = None) -> str:
    """QUERY with the dashboard VARIABLES and, when RNG and STEP_MS are given, the
    time macros substituted; anything unknown stays as written."""
    builtins = builtin_values(rng, step_ms) if rng is not None and step_ms is not None else {}

    def sub(m: re.Match[str]) -> str:
        name = m[1] or m[2] or m[4]
        fmt = m[3] or m[5]
        if name in builtins:
            return builtins[name]
        if name in variables:
            return format_value(variables[name], fmt)
        return m[0]

    return VARIABLE_RE.sub(sub, query)

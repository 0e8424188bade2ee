"""Grafana's template substitution as the dashboard server does it (macros.py)."""

from __future__ import annotations

import pytest

from orchestrator.dashboards import macros
from orchestrator.dashboards.macros import MacroError, TimeRange

NOW = 1_800_000_000_000  # an instant in ms, on a whole hour
MIN = 60_000


@pytest.mark.parametrize("text,expect", [
    ("now", NOW), ("now-15m", NOW - 15 * MIN), ("now-100ms", NOW - 100),
    ("now-2d", NOW - 2 * 86_400_000),
    ("now-90s/m", NOW - 2 * MIN),  # rounded down to the minute
    ("1800000000123", 1_800_000_000_123), ("2027-01-15T08:00:00Z", 1_800_000_000_000),
    ("2027-01-15T08:00:00", 1_800_000_000_000),  # naive = UTC
])
def test_times_resolve_like_grafana(text: str, expect: int) -> None:
    assert macros.parse_time(text, NOW) == expect


@pytest.mark.parametrize("bad", ["yesterday", "now-15", "now+5m", "", "-1"])
def test_bad_times_say_what_is_valid(bad: str) -> None:
    with pytest.raises(MacroError, match="expected now, now-15m"):
        macros.parse_time(bad, NOW)


def test_a_range_ending_before_it_starts_is_refused() -> None:
    with pytest.raises(MacroError, match="ends before it starts"):
        macros.time_range("now", "now-1h", NOW)


@pytest.mark.parametrize("ms,step", [(1, 10), (14.9, 10), (15, 20), (90, 100), (149, 100),
                                     (900, 1000), (1499, 1000), (1500, 2000), (16_000, 15_000),
                                     (3_599_999, 3_600_000), (10**12, 31_536_000_000)])
def test_round_interval_is_grafanas_table(ms: float, step: int) -> None:
    assert macros.round_interval(ms) == step


def test_interval_is_span_per_point_never_below_the_min_interval() -> None:
    fifteen = TimeRange(NOW - 15 * MIN, NOW)
    assert macros.interval_ms(fifteen, 1000) == 1000  # 900 ms a point -> 1 s
    assert macros.interval_ms(fifteen, 100) == 10_000  # 9 s -> 10 s
    ten_s = TimeRange(NOW - 10_000, NOW)
    assert macros.interval_ms(ten_s, 600) == 20  # 16.7 ms -> 20 ms
    assert macros.interval_ms(ten_s, 600, min_interval_ms=100) == 100  # timeInterval: 100ms
    with pytest.raises(MacroError):
        macros.interval_ms(ten_s, 0)


@pytest.mark.parametrize("ms,text", [(100, "100ms"), (1000, "1s"), (1500, "1500ms"),
                                     (60_000, "1m"), (7_200_000, "2h"), (86_400_000, "1d"),
                                     (604_800_000, "1w")])
def test_interval_text_is_influxql_duration(ms: int, text: str) -> None:
    assert macros.format_interval(ms) == text
    assert macros.duration_ms(text) == ms


def test_min_interval_syntax() -> None:
    assert macros.duration_ms(">100ms") == 100
    with pytest.raises(MacroError, match="expected a number and one of"):
        macros.duration_ms("100 ms")


def test_time_macros() -> None:
    rng = TimeRange(NOW - 10_000, NOW)
    q = ("SELECT mean(x) FROM m WHERE $timeFilter GROUP BY time($__interval) "
         "-- $__interval_ms $interval $__from $__to $__range $__range_s $__range_ms")
    assert macros.interpolate(q, {}, rng=rng, step_ms=200) == (
        f"SELECT mean(x) FROM m WHERE time >= {NOW - 10_000}ms and time <= {NOW}ms "
        f"GROUP BY time(200ms) -- 200 200ms {NOW - 10_000} {NOW} 10s 10 10000")


def test_variables_in_all_grafana_syntaxes_regex_escaped_by_default() -> None:
    v = {"run": "a.b/c-20270115T080000-00ff"}
    esc = r"a\.b\/c-20270115T080000-00ff"
    assert macros.interpolate('"run" =~ /^$run$/', v) == f'"run" =~ /^{esc}$/'
    assert macros.interpolate("${run} [[run]]", v) == f"{esc} {esc}"
    raw = "a.b/c-20270115T080000-00ff"
    assert macros.interpolate("${run:raw}|[[run:raw]]", v) == f"{raw}|{raw}"
    assert macros.interpolate("'${run:singlequote}'", {"run": "it's"}) == "''it\\'s''"
    # unknown variables and the time macros without a range stay as written
    kept = "$other $timeFilter $__interval"
    assert macros.interpolate(kept, v) == kept
    with pytest.raises(MacroError, match="expected one of"):
        macros.interpolate("${run:lucene}", v)


def test_escaping_round_trips() -> None:
    for value in ["plain", r"back\slash", "a.b*c+d?e(f)g|h[i]j{k}l^m$n/o"]:
        assert macros.regex_unescape(macros.regex_escape(value)) == value

"""Hypervisor steal time from /proc/stat."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.cpu_steal import parse_steal_seconds, steal_seconds
from xcplab_contract.errors import SourceFormatError

HZ = os.sysconf("SC_CLK_TCK")


def test_steal_is_the_eighth_value_of_the_aggregate_line() -> None:
    text = (f"cpu  2059797 184194 353235 1948492 1539 0 60265 {3 * HZ} 0 0\n"
            "cpu0 1043717 90253 174800 964013 912 0 29386 99999 0 0\n")
    assert parse_steal_seconds(text) == pytest.approx(3.0)


def test_a_stat_file_without_steal_is_an_error_or_empty(tmp_path: Path) -> None:
    with pytest.raises(SourceFormatError, match="no steal field"):
        parse_steal_seconds("cpu  1 2 3 4\n")
    with pytest.raises(SourceFormatError, match="no aggregate cpu line"):
        parse_steal_seconds("intr 1 2\n")
    bad = tmp_path / "stat"
    bad.write_text("cpu  1 2 3 4\n")
    assert steal_seconds(bad) == ""
    assert steal_seconds(tmp_path / "absent") == ""


def test_this_machine_reports_a_count() -> None:
    s = steal_seconds()
    assert isinstance(s, float) and s >= 0.0

"""Backends by name; bad names and options say what would be valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.backends import get_backend, names
from orchestrator.backends.netns import NetnsBackend
from xcplab_contract.errors import XcplabError


def test_netns_is_registered() -> None:
    assert "netns" in names() and get_backend("netns") is NetnsBackend


def test_unknown_backend_lists_valid_names() -> None:
    with pytest.raises(XcplabError, match=r"unknown backend 'dokcer' \(valid: .*netns"):
        get_backend("dokcer")


@pytest.mark.parametrize(("opts", "message"), [
    ({"router_mode": "linux"}, "router_mode='linux' (valid: engine, kernel)"),
    ({"engine_per": "node"}, "engine_per='node' (valid: machine, router)"),
    ({"colour": "red"},
     "unknown option 'colour' (valid: router_mode, engine_per, engine_priority, "
     "host_nice)"),
    ({"engine_priority": "100"}, "engine_priority='100' (valid: an integer 0..99)"),
    ({"engine_priority": "high"}, "engine_priority='high' (valid: an integer 0..99)"),
    ({"host_nice": "20"}, "host_nice='20' (valid: an integer -20..19)"),
    ({"host_nice": -21}, "host_nice=-21 (valid: an integer -20..19)"),
])
def test_bad_options_are_refused(tmp_path: Path, opts: dict, message: str) -> None:
    with pytest.raises(XcplabError) as e:
        NetnsBackend(tmp_path, opts)
    assert message in str(e.value)


@pytest.mark.parametrize("prio", ["0", "10", 99])
def test_engine_priority_accepts_0_to_99(tmp_path: Path, prio: object) -> None:
    NetnsBackend(tmp_path, {"engine_priority": prio})


@pytest.mark.parametrize("nice", ["-20", "-15", 0, "19"])
def test_host_nice_accepts_minus_20_to_19(tmp_path: Path, nice: object) -> None:
    NetnsBackend(tmp_path, {"host_nice": nice})

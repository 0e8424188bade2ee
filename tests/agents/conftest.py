"""A three-node share (h1 - r1 - h2) with a unique run tag, removed afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_shares import three_node_share

from agents import nsops
from agents.share import Share


@pytest.fixture
def share() -> Iterator[Share]:
    s = three_node_share()
    yield s
    for ns in s.namespaces:
        nsops.remove(ns.name)


@pytest.fixture
def state_root(tmp_path: Path) -> Path:
    return tmp_path / "state"

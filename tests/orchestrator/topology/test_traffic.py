"""Seeded traffic matrices (orchestrator.topology.traffic)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from orchestrator.topology import traffic

HOSTS = [(f"h{i}", f"e{(i - 1) // 2 + 1}") for i in range(1, 21)]  # two hosts per router


@pytest.mark.parametrize("matrix", traffic.MATRICES)
def test_seeded_distinct_ends_other_router(matrix):
    a = traffic.pairs(random.Random("1:traffic"), HOSTS, matrix, 50)
    assert a == traffic.pairs(random.Random("1:traffic"), HOSTS, matrix, 50)
    assert a != traffic.pairs(random.Random("2:traffic"), HOSTS, matrix, 50)
    router = dict(HOSTS)
    assert all(s != d and router[s] != router[d] for s, d in a)


def test_same_router_allowed_when_asked():
    pairs = traffic.pairs(random.Random(1), HOSTS, "uniform", 400, avoid_same_router=False)
    router = dict(HOSTS)
    assert any(router[s] == router[d] for s, d in pairs)


def test_uniform_spreads_over_hosts():
    pairs = traffic.pairs(random.Random(1), HOSTS, "uniform", 2000)
    counts = Counter(d for _, d in pairs)
    assert len(counts) == 20 and max(counts.values()) < 3 * min(counts.values())


def test_hotspot_concentrates_on_the_hot_hosts():
    pairs = traffic.pairs(random.Random(1), HOSTS, "hotspot", 1000, hotspots=2, hot_share=0.8)
    top2 = sum(n for _, n in Counter(d for _, d in pairs).most_common(2))
    assert top2 >= 0.75 * 1000  # 0.8 + the uniform share that lands on them


def test_gravity_is_skewed_by_masses():
    pairs = traffic.pairs(random.Random(4), HOSTS, "gravity", 4000)
    counts = Counter(h for p in pairs for h in p)
    assert max(counts.values()) > 3 * min(counts.values())


def test_needs_two_hosts():
    with pytest.raises(ValueError, match="at least two hosts"):
        traffic.pairs(random.Random(1), HOSTS[:1], "uniform", 1)

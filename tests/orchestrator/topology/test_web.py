"""Seeded web sessions (orchestrator/topology/web.py): deterministic, open loop,
and each distribution's sample mean where its parameters put it."""

from __future__ import annotations

import random
import statistics

import pytest

from orchestrator.topology import web

SIZES = web.Sizes("pareto", 12_000, 1.2, 1_000_000)


def draw(seed: int, sessions: int = 300, end_s: float = 1e9, sizes: web.Sizes = SIZES,
         per_session: float = 5.0, think: float = 1.0) -> web.Drawn:
    return web.sessions(random.Random(seed), ["h1", "h2"], ["h3", "h4", "h5"], sessions, 5.0,
                        per_session, sizes, "exponential", think, 0.5, end_s)


def test_same_seed_same_flows_other_seed_other_flows():
    a, b, c = draw(1), draw(1), draw(2)
    assert [(f.server, f.client, f.objects) for f in a.flows] == \
        [(f.server, f.client, f.objects) for f in b.flows]
    assert [f.objects for f in a.flows] != [f.objects for f in c.flows]
    assert a.sessions == 300 and a.objects == sum(len(f.objects) for f in a.flows)
    assert {f.server for f in a.flows} <= {"h1", "h2"}
    assert {f.client for f in a.flows} <= {"h3", "h4", "h5"}
    for f in a.flows:
        assert f.objects == sorted(f.objects)
        assert all(1 <= b <= 1_000_000 for _, b in f.objects)  # cut at max


def test_the_end_of_the_run_cuts_sessions_and_objects_not_the_draws_before_it():
    full, cut = draw(4), draw(4, end_s=20.0)
    # Poisson arrivals at 5/s from 0.5 s: about 97 sessions before 20 s
    assert 75 <= cut.sessions <= 120
    kept = {(f.server, f.client): set(f.objects) for f in full.flows}
    for f in cut.flows:
        assert all(t < 20.0 for t, _ in f.objects)
        assert set(f.objects) <= kept[(f.server, f.client)]


@pytest.mark.parametrize("dist,mean,shape", [("pareto", 12_000, 2.5), ("exponential", 12_000, 0),
                                             ("constant", 12_000, 0)])
def test_size_sample_means(dist: str, mean: float, shape: float):
    rng = random.Random(9)
    s = web.Sizes(dist, mean, shape or 1.2, 10**9)
    xs = [web.draw_size(rng, s) for _ in range(40_000)]
    assert statistics.fmean(xs) == pytest.approx(mean, rel=0.05)
    if dist == "pareto":  # the scale x_m = mean (a - 1) / a is the least size
        assert min(xs) >= round(mean * (shape - 1) / shape) - 1


def test_heavy_tailed_pareto_is_cut_at_max():
    rng = random.Random(3)
    s = web.Sizes("pareto", 12_000, 1.2, 200_000)
    xs = [web.draw_size(rng, s) for _ in range(20_000)]
    assert max(xs) == 200_000  # shape 1.2: some draws exceed the cut
    assert statistics.median(xs) < 12_000  # most objects are small


def test_counts_think_times_and_arrivals():
    rng = random.Random(5)
    ks = [web.draw_count(rng, 5.0) for _ in range(40_000)]
    assert min(ks) == 1 and statistics.fmean(ks) == pytest.approx(5.0, rel=0.03)
    assert all(web.draw_count(rng, 1.0) == 1 for _ in range(100))
    thinks = [web.draw_think(rng, "exponential", 0.2) for _ in range(40_000)]
    assert statistics.fmean(thinks) == pytest.approx(0.2, rel=0.03)
    assert web.draw_think(rng, "constant", 0.2) == 0.2
    # Poisson arrivals: 2000 sessions at 5/s take about 400 s
    d = web.sessions(random.Random(6), ["a"], ["b"], 2000, 5.0, 1.0, SIZES, "constant", 0.0,
                     0.0, 1e9)
    starts = d.flows[0].objects
    assert starts[-1][0] == pytest.approx(400, rel=0.06)
    assert len(starts) == 2000  # one object per session: objects_per_session 1


def test_objects_of_a_session_are_a_think_time_apart_open_loop():
    d = web.sessions(random.Random(8), ["s"], ["c"], 1, 1.0, 50.0,
                     web.Sizes("constant", 1000, 1.2, 10**6), "constant", 0.25, 0.0, 1e9)
    ts = [t for t, _ in d.flows[0].objects]
    assert len(ts) > 1
    assert all(b - a == pytest.approx(0.25, abs=2e-6) for a, b in zip(ts, ts[1:], strict=False))

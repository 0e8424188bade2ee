"""Only the dashboards' own queries run, with values for their variables: as written,
as Grafana's front end sends them, never anything else (catalog.py)."""

from __future__ import annotations

import re

import pytest

from orchestrator.dashboards import macros
from orchestrator.dashboards.catalog import QueryCatalog, QueryRefused
from orchestrator.dashboards.model import DEFAULT_ROOT, load_dashboards

RUN = "dashcheck-20270115T080000-00ff"
RNG = macros.TimeRange(1_800_000_000_000, 1_800_000_010_000)


@pytest.fixture(scope="module")
def catalog() -> QueryCatalog:
    return QueryCatalog(load_dashboards(DEFAULT_ROOT / "json"))


def _templates(catalog: QueryCatalog) -> list[str]:
    return [e.template for e in catalog.entries]


def test_every_query_of_the_dashboards_is_in_the_catalog(catalog: QueryCatalog) -> None:
    (d,) = load_dashboards(DEFAULT_ROOT / "json").values()
    assert set(d.queries()) == set(_templates(catalog))
    kinds = {e.kind for e in catalog.entries}
    assert kinds == {"panel", "variable", "annotation"}
    (var,) = [e for e in catalog.entries if e.kind == "variable"]
    assert var.defines == "run" and var.variables == ()


def test_template_with_variables_given_apart(catalog: QueryCatalog) -> None:
    for t in _templates(catalog):
        m = catalog.match(t, {"run": RUN} if "$run" in t else {})
        assert m.entry.template == t
        assert m.values == ({"run": RUN} if "$run" in t else {})
        executed = catalog.render(m, RNG, 200)
        assert executed == macros.interpolate(t, {"run": RUN}, rng=RNG, step_ms=200)
        assert "$" not in executed.replace("$/", "")  # every macro substituted


def test_query_as_grafanas_front_end_sends_it(catalog: QueryCatalog) -> None:
    """Variables filled (regex-escaped) and $__interval already a duration; $timeFilter
    is left to the backend."""
    for t in _templates(catalog):
        sent = macros.interpolate(t, {"run": RUN}).replace("$__interval", "500ms")
        m = catalog.match(sent, {})
        assert m.entry.template == t and m.values.get("run", RUN) == RUN
        # the server's own interval decides, not the one in the text
        assert "GROUP BY time(200ms)" in catalog.render(m, RNG, 200) or "GROUP BY" not in t


@pytest.mark.parametrize("value", [
    "x$/ OR time > 0 OR \"run\" =~ /.*",  # an attempt to leave the regex
    ".*", "a/b", "'; DROP DATABASE \"xcplab\"",
])
def test_values_stay_inside_their_escaped_regex(catalog: QueryCatalog, value: str) -> None:
    t = next(t for t in _templates(catalog) if "$run" in t)
    m = catalog.match(t, {"run": value})
    assert m.values == {"run": value}
    executed = catalog.render(m, RNG, 200)
    (inside,) = re.findall(r"/\^(.*?)\$/", executed.replace(r"\/", "\0").replace(r"\$", "\1"))
    assert macros.regex_unescape(inside.replace("\0", r"\/").replace("\1", r"\$")) == value


@pytest.mark.parametrize("query", [
    "DROP DATABASE xcplab",
    "SHOW MEASUREMENTS",
    'SELECT * FROM "flow"',
    # a dashboard query with one more clause
    'SELECT mean("throughput_bps") FROM "flow" WHERE ("run" =~ /^$run$/) AND $timeFilter '
    'GROUP BY time($__interval), "flow", "stream" fill(none); DROP DATABASE xcplab',
    # another field than the panel's
    'SELECT mean("bytes") FROM "flow" WHERE ("run" =~ /^$run$/) AND $timeFilter '
    'GROUP BY time($__interval), "flow", "stream" fill(none)',
    # the time filter written out by the client (only the server fills it in)
    'SELECT "detail", "kind", "target" FROM "event" WHERE ("run" =~ /^x$/) AND time > 0',
])
def test_anything_else_is_refused(catalog: QueryCatalog, query: str) -> None:
    with pytest.raises(QueryRefused, match="not a query of the provisioned dashboards"):
        catalog.match(query, {"run": RUN})


def test_unknown_or_long_variables_are_refused(catalog: QueryCatalog) -> None:
    t = next(t for t in _templates(catalog) if "$run" in t)
    with pytest.raises(QueryRefused, match=r"variables \['node'\]: unknown.*known: run"):
        catalog.match(t, {"node": "r1"})
    with pytest.raises(QueryRefused, match="longer than 200"):
        catalog.match(t, {"run": "x" * 201})

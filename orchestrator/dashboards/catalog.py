"""Which queries the dashboard server runs: only the provisioned dashboards' own
(panel targets, template variables, annotations), with values for their variables.

A request's query is matched against every template; the dashboard variables in
it become captured values and the query that runs is rebuilt from the template,
so no text a client sends reaches InfluxDB except as an escaped variable value.
A template matches either as written (`$run`, `$__interval`) or as Grafana's front
end sends it (variables filled in, `$__interval` already a duration; `$timeFilter`
is always left to the server, as Grafana leaves it to its backend).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from orchestrator.dashboards import macros
from orchestrator.dashboards.model import Dashboard
from xcplab_contract.errors import XcplabError

MAX_VALUE_CHARS = 200
_DURATION_TOKEN = r"\d{1,12}(?:ms|s|m|h|d|w|y)"


class QueryRefused(XcplabError):
    """Not one of the dashboards' queries, or a variable value out of bounds."""


@dataclass(frozen=True)
class Entry:
    dashboard_uid: str
    kind: str  # "panel" | "variable" | "annotation"
    defines: str | None  # the variable whose values a "variable" query lists
    template: str
    variables: tuple[str, ...]  # dashboard variables the template uses
    formats: Mapping[str, str | None]  # each variable's format at its first use
    pattern: re.Pattern[str]


@dataclass(frozen=True)
class Match:
    entry: Entry
    values: dict[str, str]  # variable -> value (unescaped)


def _compile(template: str, names: set[str]) -> tuple[re.Pattern[str], tuple[str, ...],
                                                     dict[str, str | None]]:
    parts: list[str] = []
    used: list[str] = []
    formats: dict[str, str | None] = {}
    pos = 0
    for m in macros.VARIABLE_RE.finditer(template):
        parts.append(re.escape(template[pos:m.start()]))
        pos = m.end()
        name = m[1] or m[2] or m[4]
        if name in names:
            if name in used:
                parts.append(f"(?P={name})")
            else:
                used.append(name)
                formats[name] = m[3] or m[5]
                parts.append(f"(?P<{name}>[^\\n]{{1,{2 * MAX_VALUE_CHARS}}}?)")
        elif name in ("__interval", "interval"):
            parts.append(f"(?:{re.escape(m[0])}|{_DURATION_TOKEN})")
        elif name == "__interval_ms":
            parts.append(f"(?:{re.escape(m[0])}|\\d{{1,15}})")
        else:
            parts.append(re.escape(m[0]))
    parts.append(re.escape(template[pos:]))
    return re.compile("".join(parts), re.DOTALL), tuple(used), formats


def _unformat(value: str, fmt: str | None) -> str:
    if fmt in (None, "regex"):
        return macros.regex_unescape(value)
    if fmt in ("singlequote", "doublequote") and len(value) >= 2:
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


class QueryCatalog:
    def __init__(self, dashboards: Mapping[str, Dashboard]) -> None:
        self.entries: list[Entry] = []
        seen: set[str] = set()
        for d in dashboards.values():
            names = {v.name for v in d.variables}
            kinds: list[tuple[str, str | None, str]] = []
            kinds += [("panel", None, t.query) for p in d.panels for t in p.targets]
            kinds += [("variable", v.name, v.query) for v in d.variables]
            kinds += [("annotation", None, a.query) for a in d.annotations]
            for kind, defines, q in kinds:
                if q in seen:
                    continue
                seen.add(q)
                pattern, used, formats = _compile(q, names)
                self.entries.append(Entry(d.uid, kind, defines, q, used, formats, pattern))
        self.names = {v.name for d in dashboards.values() for v in d.variables}

    def match(self, query: str, variables: Mapping[str, str]) -> Match:
        """The template QUERY is an instance of, after substituting VARIABLES (values a
        request gives for the dashboard variables still written as `$name` in it)."""
        bad = {k: v for k, v in variables.items()
               if len(v) > MAX_VALUE_CHARS or "\n" in v or k not in self.names}
        if bad:
            raise QueryRefused(f"variables {sorted(bad)}: unknown to the dashboards "
                               f"(known: {', '.join(sorted(self.names)) or 'none'}) or longer "
                               f"than {MAX_VALUE_CHARS} characters")
        text = macros.interpolate(query.strip(), variables)
        for e in self.entries:
            m = e.pattern.fullmatch(text)
            if m is None:
                continue
            values = {n: _unformat(m[n], e.formats[n]) for n in e.variables}
            if any(len(v) > MAX_VALUE_CHARS for v in values.values()):
                continue
            return Match(e, values)
        raise QueryRefused("not a query of the provisioned dashboards (this server runs only "
                           f"their panel, variable and annotation queries): {query[:200]!r}")

    def render(self, match: Match, rng: macros.TimeRange, step_ms: int) -> str:
        """The InfluxQL that runs: the template with the values and time macros."""
        return macros.interpolate(match.entry.template, match.values, rng=rng, step_ms=step_ms)

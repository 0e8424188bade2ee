"""Grafana's dashboard model, the part xcplab's provisioned dashboards use, read
from the same files Grafana provisions (`dashboards/json/*.json`,
`dashboards/provisioning/datasources/*.yaml`).

Parsed once at the edge into frozen dataclasses; a file that does not fit the
model is refused with its file, the field's path and what was expected.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

import orchestrator
from xcplab_contract.errors import XcplabError

# A source checkout's dashboards/ (json/ and provisioning/); XCPLAB_DASHBOARDS_DIR
# or `xcplab dashboards --dir` point elsewhere (an installed wheel has none).
DEFAULT_ROOT = Path(orchestrator.__file__).resolve().parent.parent / "dashboards"
ENV_ROOT = "XCPLAB_DASHBOARDS_DIR"

# Bounds: what the server holds in memory and answers about.
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DASHBOARDS = 100
MAX_PANELS = 200
MAX_QUERY_CHARS = 10_000
GRID_COLUMNS = 24  # Grafana's grid: 24 columns, gridPos in columns and 30 px rows


class DashboardError(XcplabError):
    """A dashboard or datasource file that does not fit the model."""

    def __init__(self, file: Path | str, field: str, reason: str) -> None:
        super().__init__(f"{file}: {field}: {reason}")
        self.file, self.field, self.reason = str(file), field, reason


@dataclass(frozen=True)
class Target:
    ref_id: str
    query: str
    result_format: str  # "time_series" | "table"
    datasource_uid: str | None


@dataclass(frozen=True)
class GridPos:
    x: int
    y: int
    w: int
    h: int


@dataclass(frozen=True)
class Panel:
    id: int
    type: str  # "timeseries", "state-timeline", "row", ...
    title: str
    grid: GridPos
    unit: str | None
    targets: tuple[Target, ...]


@dataclass(frozen=True)
class Variable:
    """A `query` template variable: its values are the first column of QUERY's answer."""

    name: str
    label: str
    query: str
    datasource_uid: str | None
    sort: int  # Grafana: 0 none, 1 alphabetical asc, 2 alphabetical desc


@dataclass(frozen=True)
class Annotation:
    """An `annotations.list` entry with an InfluxDB query (Grafana's built-in one is not)."""

    name: str
    query: str
    datasource_uid: str | None
    enable: bool
    icon_color: str
    text_column: str | None
    title_column: str | None
    tags_columns: tuple[str, ...]


@dataclass(frozen=True)
class Dashboard:
    uid: str
    title: str
    path: Path
    refresh: str | None
    time_from: str
    time_to: str
    panels: tuple[Panel, ...]
    variables: tuple[Variable, ...]
    annotations: tuple[Annotation, ...]
    raw: dict[str, Any]  # the file as Grafana reads it (served by /api/dashboards/uid/UID)

    def queries(self) -> list[str]:
        """Every query text the dashboard sends: panels, variables, annotations."""
        return ([t.query for p in self.panels for t in p.targets]
                + [v.query for v in self.variables] + [a.query for a in self.annotations])


@dataclass(frozen=True)
class Datasource:
    uid: str
    name: str
    type: str
    url: str
    database: str
    time_interval: str | None  # Grafana's "min interval" for $__interval


def _get(obj: Any, key: str, kind: type | tuple[type, ...], file: Path, where: str,
         default: Any = ...) -> Any:
    if not isinstance(obj, dict):
        raise DashboardError(file, where, f"expected an object, found {type(obj).__name__}")
    if key not in obj:
        if default is ...:
            raise DashboardError(file, f"{where}.{key}".lstrip("."), "missing")
        return default
    v = obj[key]
    if not isinstance(v, kind) or (isinstance(v, bool) and kind in (int, (int, float))):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise DashboardError(file, f"{where}.{key}".lstrip("."),
                             f"expected {names}, found {type(v).__name__}")
    return v


def _ds_uid(obj: dict[str, Any]) -> str | None:
    ds = obj.get("datasource")
    if isinstance(ds, dict):
        return str(ds.get("uid")) if ds.get("uid") is not None else None
    return str(ds) if isinstance(ds, str) else None


def _query(obj: dict[str, Any], file: Path, where: str) -> str:
    q = _get(obj, "query", str, file, where)
    if not q.strip() or len(q) > MAX_QUERY_CHARS:
        raise DashboardError(file, f"{where}.query",
                             f"expected a query of 1..{MAX_QUERY_CHARS} characters, "
                             f"found {len(q)}")
    return q


def _panel(p: Any, file: Path, where: str) -> Panel:
    g = _get(p, "gridPos", dict, file, where)
    grid = GridPos(*(_get(g, k, int, file, f"{where}.gridPos") for k in ("x", "y", "w", "h")))
    if not (0 <= grid.x < GRID_COLUMNS and 1 <= grid.w <= GRID_COLUMNS - grid.x
            and grid.y >= 0 and grid.h >= 1):
        raise DashboardError(file, f"{where}.gridPos",
                             f"x in [0, {GRID_COLUMNS}), w in [1, {GRID_COLUMNS} - x], y >= 0, "
                             f"h >= 1; found {g}")
    targets = []
    for i, t in enumerate(_get(p, "targets", list, file, where, [])):
        tw = f"{where}.targets[{i}]"
        if not _get(t, "rawQuery", bool, file, tw, False):
            raise DashboardError(file, f"{tw}.rawQuery",
                                 "only raw InfluxQL targets are rendered (rawQuery: true)")
        fmt = _get(t, "resultFormat", str, file, tw, "time_series")
        if fmt not in ("time_series", "table"):
            raise DashboardError(file, f"{tw}.resultFormat",
                                 f"expected time_series or table, found {fmt!r}")
        targets.append(Target(_get(t, "refId", str, file, tw), _query(t, file, tw), fmt,
                              _ds_uid(t) or _ds_uid(p)))
    unit = (p.get("fieldConfig") or {}).get("defaults", {}).get("unit")
    return Panel(_get(p, "id", int, file, where), _get(p, "type", str, file, where),
                 _get(p, "title", str, file, where, ""), grid,
                 str(unit) if unit is not None else None, tuple(targets))


def _variable(v: Any, file: Path, where: str) -> Variable:
    kind = _get(v, "type", str, file, where)
    if kind != "query":
        raise DashboardError(file, f"{where}.type",
                             f"only `query` variables are supported, found {kind!r}")
    if _get(v, "multi", bool, file, where, False) or _get(v, "includeAll", bool, file, where,
                                                          False):
        raise DashboardError(file, f"{where}.multi",
                             "multi-value and All variables are not supported")
    q = v.get("query")
    if isinstance(q, dict):  # newer Grafana: {"query": "...", "refId": ...}
        q = q.get("query")
    name = _get(v, "name", str, file, where)
    return Variable(name, _get(v, "label", str, file, where, name),
                    _query({"query": q}, file, where), _ds_uid(v),
                    _get(v, "sort", int, file, where, 0))


def _annotation(a: Any, file: Path, where: str) -> Annotation | None:
    if _get(a, "builtIn", int, file, where, 0) or "query" not in a:
        return None  # Grafana's own annotations (stored in its database): none here
    tags = _get(a, "tagsColumn", str, file, where, "")
    return Annotation(_get(a, "name", str, file, where), _query(a, file, where), _ds_uid(a),
                      _get(a, "enable", bool, file, where, True),
                      _get(a, "iconColor", str, file, where, "#FF9830"),
                      _get(a, "textColumn", str, file, where, None),
                      _get(a, "titleColumn", str, file, where, None),
                      tuple(c.strip() for c in tags.split(",") if c.strip()))


def load_dashboard(path: Path) -> Dashboard:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise DashboardError(path, "(file)", f"larger than {MAX_FILE_BYTES} bytes")
    try:
        d = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DashboardError(path, "(file)", f"not JSON: {e}") from e
    panels_raw = _get(d, "panels", list, path, "")
    if len(panels_raw) > MAX_PANELS:
        raise DashboardError(path, "panels", f"more than {MAX_PANELS} panels")
    panels = tuple(_panel(p, path, f"panels[{i}]") for i, p in enumerate(panels_raw))
    ids = [p.id for p in panels]
    if len(set(ids)) != len(ids):
        raise DashboardError(path, "panels", f"panel ids repeat: {sorted(ids)}")
    tl = _get(d, "templating", dict, path, "", {"list": []})
    variables = tuple(_variable(v, path, f"templating.list[{i}]")
                      for i, v in enumerate(_get(tl, "list", list, path, "templating", [])))
    al = _get(d, "annotations", dict, path, "", {"list": []})
    listed = [_annotation(a, path, f"annotations.list[{i}]")
              for i, a in enumerate(_get(al, "list", list, path, "annotations", []))]
    annotations = tuple(a for a in listed if a is not None)
    t = _get(d, "time", dict, path, "", {"from": "now-6h", "to": "now"})
    refresh = d.get("refresh") or None
    return Dashboard(_get(d, "uid", str, path, ""), _get(d, "title", str, path, ""), path,
                     str(refresh) if refresh else None,
                     _get(t, "from", str, path, "time"), _get(t, "to", str, path, "time"),
                     panels, variables, annotations, d)


def load_dashboards(json_dir: Path) -> dict[str, Dashboard]:
    """Every `*.json` of JSON_DIR by uid (what Grafana's file provider would load)."""
    if not json_dir.is_dir():
        raise DashboardError(json_dir, "(directory)", "no such directory of dashboard JSON")
    files = sorted(json_dir.glob("*.json"))
    if len(files) > MAX_DASHBOARDS:
        raise DashboardError(json_dir, "(directory)", f"more than {MAX_DASHBOARDS} dashboards")
    out: dict[str, Dashboard] = {}
    for f in files:
        d = load_dashboard(f)
        if d.uid in out:
            raise DashboardError(f, "uid", f"{d.uid!r} is also the uid of {out[d.uid].path}")
        out[d.uid] = d
    return out


def load_datasources(provisioning_dir: Path) -> dict[str, Datasource]:
    """InfluxDB datasources of `provisioning/datasources/*.yaml` by uid."""
    out: dict[str, Datasource] = {}
    for f in sorted(provisioning_dir.glob("*.y*ml")):
        try:
            doc = yaml.safe_load(f.read_text()) or {}
        except yaml.YAMLError as e:
            raise DashboardError(f, "(file)", f"not YAML: {e}") from e
        for i, ds in enumerate(_get(doc, "datasources", list, f, "", [])):
            w = f"datasources[{i}]"
            if _get(ds, "type", str, f, w) != "influxdb":
                continue
            jd = _get(ds, "jsonData", dict, f, w, {})
            ti = jd.get("timeInterval")
            out[_get(ds, "uid", str, f, w)] = Datasource(
                ds["uid"], _get(ds, "name", str, f, w, ds["uid"]), "influxdb",
                _get(ds, "url", str, f, w, ""), _get(ds, "database", str, f, w, "xcplab"),
                str(ti) if ti else None)
    return out


def dashboards_root(explicit: Path | None = None) -> Path:
    """The folder holding json/ and provisioning/: the argument, $XCPLAB_DASHBOARDS_DIR,
    or the source checkout's dashboards/."""
    if explicit is not None:
        return explicit
    env = os.environ.get(ENV_ROOT)
    return Path(env) if env else DEFAULT_ROOT

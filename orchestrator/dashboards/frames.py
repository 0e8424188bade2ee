"""InfluxDB `/query` answers as Grafana data frames (the JSON of `/api/ds/query`).

time_series: one frame per series and value column, fields `Time` and `Value`, the
series' tags as the value field's labels, named as Grafana's InfluxQL backend names
them without an alias: `measurement.column {tag: value, ...}`.
table: one frame per statement, fields `Time` (when the answer has time), the tag
keys, then the columns (annotations read `detail`, `kind`, `target` from here).
"""

from __future__ import annotations

from typing import Any


def _field_type(values: list[Any]) -> str:
    kinds = {type(v) for v in values if v is not None}
    if kinds and kinds <= {int, float}:
        return "number"
    if kinds == {bool}:
        return "boolean"
    return "string"


def series_name(measurement: str, column: str, tags: dict[str, str]) -> str:
    if not tags:
        return f"{measurement}.{column}"
    return f"{measurement}.{column} {{{', '.join(f'{k}: {v}' for k, v in tags.items())}}}"


def time_series(ref_id: str, executed: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    frames = []
    for s in result.get("series") or []:
        cols: list[str] = s.get("columns") or []
        if "time" not in cols:
            continue
        it = cols.index("time")
        rows = s.get("values") or []
        tags = dict(sorted((s.get("tags") or {}).items()))
        times = [r[it] for r in rows]
        for ic, col in enumerate(cols):
            if ic == it:
                continue
            vals = [r[ic] for r in rows]
            name = series_name(s.get("name", ""), col, tags)
            frames.append({
                "schema": {"name": name, "refId": ref_id,
                           "meta": {"executedQueryString": executed},
                           "fields": [{"name": "Time", "type": "time",
                                       "typeInfo": {"frame": "time.Time"}},
                                      {"name": "Value", "type": _field_type(vals),
                                       "labels": tags,
                                       "config": {"displayNameFromDS": name}}]},
                "data": {"values": [times, vals]}})
    return frames


def table(ref_id: str, executed: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    series = result.get("series") or []
    tag_keys = sorted({k for s in series for k in (s.get("tags") or {})})
    columns: list[str] = []
    for s in series:
        columns += [c for c in s.get("columns") or [] if c not in columns and c not in tag_keys]
    has_time = "time" in columns
    names = (["time"] if has_time else []) + tag_keys + [c for c in columns if c != "time"]
    cells: dict[str, list[Any]] = {n: [] for n in names}
    for s in series:
        cols = s.get("columns") or []
        tags = s.get("tags") or {}
        for row in s.get("values") or []:
            by = dict(zip(cols, row, strict=False))
            for n in names:
                cells[n].append(tags.get(n) if n in tags else by.get(n))
    fields = [{"name": "Time" if n == "time" else n,
               "type": "time" if n == "time" else _field_type(cells[n])} for n in names]
    return [{"schema": {"name": "", "refId": ref_id, "meta": {"executedQueryString": executed},
                        "fields": fields},
             "data": {"values": [cells[n] for n in names]}}]

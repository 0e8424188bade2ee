"""The dashboard server's state: the provisioned dashboards, their datasource and
the InfluxDB they read, loaded once (by `xcplab dashboards`, or by `xcplab serve`
on the first request under /dashboards/)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from orchestrator.dashboards.catalog import QueryCatalog
from orchestrator.dashboards.model import (
    Dashboard,
    DashboardError,
    Datasource,
    dashboards_root,
    load_dashboards,
    load_datasources,
)
from orchestrator.dashboards.query_api import QueryRunner
from orchestrator.sinks.influx import parse_url

DEFAULT_DATASOURCE = Datasource("xcplab-influx", "xcplab-influxdb", "influxdb",
                                "http://127.0.0.1:8086", "xcplab", "100ms")


@dataclass(frozen=True)
class DashboardServer:
    root: Path
    dashboards: dict[str, Dashboard]
    datasource: Datasource
    influx: str | None  # what runs read from, "http://host:8086/db"; None: not configured
    runner: QueryRunner | None

    @classmethod
    def load(cls, influx_url: str | None, root: Path | None = None, *,
             provisioned_fallback: bool = True) -> DashboardServer:
        """ROOT's json/ and provisioning/ (default: `dashboards_root()`); the datasource
        the dashboards name, reading INFLUX_URL (the URL runs write to) when given,
        else (PROVISIONED_FALLBACK) the provisioned url and database."""
        root = dashboards_root(root)
        dashboards = load_dashboards(root / "json")
        sources = load_datasources(root / "provisioning" / "datasources")
        uids = {t.datasource_uid for d in dashboards.values() for p in d.panels
                for t in p.targets} - {None}
        if len(uids) > 1:
            raise DashboardError(root / "json", "datasource",
                                 f"panels name several datasources {sorted(map(str, uids))}; "
                                 "this server reads one InfluxDB")
        uid = next((u for u in uids if u is not None), DEFAULT_DATASOURCE.uid)
        ds = sources.get(uid) or Datasource(uid, *[getattr(DEFAULT_DATASOURCE, f) for f in (
            "name", "type", "url", "database", "time_interval")])
        if influx_url is None and provisioned_fallback and ds.url:
            influx_url = f"{ds.url.rstrip('/')}/{ds.database}"
        runner = None
        if influx_url:
            base, db = parse_url(influx_url)
            runner = QueryRunner(QueryCatalog(dashboards), ds, base, db)
        return cls(root, dashboards, ds, influx_url, runner)

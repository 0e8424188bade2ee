"""`xcplab dashboards`: the provisioned Grafana dashboards served alone (docs/grafana.md)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dashboards", help="serve the dashboards of dashboards/ against an "
                       "InfluxDB (Grafana's layout and query API; no Grafana needed)",
                       description="Render dashboards/json/*.json (Grafana's dashboard model) "
                       "with their queries run on InfluxDB: http://HOST:PORT/dashboards/. "
                       "Every run in the database is visible: bind to loopback, or use "
                       "`xcplab serve --influx URL` (/dashboards/, per-user).")
    p.add_argument("--influx", metavar="URL", default=os.environ.get("XCPLAB_INFLUX_URL"),
                   help="the InfluxDB runs write to, http://HOST:8086/DB (default "
                        "$XCPLAB_INFLUX_URL, else the provisioned datasource's url/database)")
    p.add_argument("--dir", type=Path, help="folder with json/ and provisioning/ (default "
                   "$XCPLAB_DASHBOARDS_DIR, else the checkout's dashboards/)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=3000)
    p.add_argument("--log-level", default="info")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from orchestrator.dashboards import standalone_app
    from orchestrator.dashboards.server import DashboardServer

    server = DashboardServer.load(args.influx, args.dir)
    print(f"xcplab dashboards: {len(server.dashboards)} dashboard(s) from {server.root}, "
          f"InfluxDB {server.influx}; http://{args.host}:{args.port}/dashboards/", flush=True)
    uvicorn.run(standalone_app(server), host=args.host, port=args.port,
                log_level=args.log_level)
    return 0

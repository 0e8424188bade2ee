"""`xcplab serve`: the web API with its scheduler and local worker."""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator.backends import names as backend_names
from xcplab_contract.errors import XcplabError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the web API (with the scheduler and a local worker)",
                       description="Serve /api/v1. Flags override XCPLAB_* environment "
                                   "variables (see orchestrator/service/settings.py).")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--data-dir", type=Path, help="database and runs (default /var/lib/xcplab)")
    p.add_argument("--db", dest="db_url", help="SQLAlchemy URL, e.g. postgresql+psycopg://...")
    p.add_argument("--runs-dir", type=Path)
    p.add_argument("--archives-dir", type=Path, help="move finished archives here")
    p.add_argument("--backend", choices=backend_names(), help="backend of the runs (default netns)")
    p.add_argument("--influx", dest="influx_url", help="InfluxDB URL for live metrics")
    p.add_argument("--pools", help="NAME=CONCURRENCY,... (default local=1; 0 pauses a pool)")
    p.add_argument("--run-time-limit", dest="run_time_limit_s", type=float,
                   help="seconds after which a run is torn down and failed")
    p.add_argument("--log-level", default="info")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from orchestrator.api.main import create_app
    from orchestrator.service.gc_policy import freeze_startup_heap
    from orchestrator.service.settings import parse_pools, settings_from_env

    try:
        pools = parse_pools(args.pools) if args.pools else None
        settings = settings_from_env(data_dir=args.data_dir, db_url=args.db_url,
                                     runs_dir=args.runs_dir, archives_dir=args.archives_dir,
                                     backend=args.backend,
                                     influx_url=args.influx_url, pools=pools,
                                     run_time_limit_s=args.run_time_limit_s)
    except ValueError as e:
        raise XcplabError(f"serve: {e}") from e
    app = create_app(settings=settings)
    freeze_startup_heap()  # after the imports: full collections stop walking them
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0

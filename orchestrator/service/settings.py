"""Service settings: one pydantic model, read from XCPLAB_* environment variables.

`create_app(settings=...)` takes them; without, the API reads the environment
through `orchestrator.api.deps.get_settings()`. The CLI (`xcplab serve`) builds them
from flags layered over the environment. Every limit a user can hit is here so it is
visible in one place.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

ENV_PREFIX = "XCPLAB_"


class Settings(BaseModel):
    """Everything the service needs to know; immutable once built."""

    model_config = {"frozen": True}

    data_dir: Path = Field(default=Path("/var/lib/xcplab"),
                           description="database (SQLite default) and runs live here")
    db_url: str | None = Field(default=None,
                               description="SQLAlchemy URL; default sqlite in data_dir")
    runs_dir: Path | None = Field(default=None, description="default data_dir/runs")
    archives_dir: Path | None = Field(
        default=None, description="if set, finished archives move here (own volume)")
    backend: str = "netns"
    influx_url: str | None = None
    # pool name -> how many runs it executes at once; 0 pauses a pool (bench, tests).
    pools: dict[str, int] = Field(default_factory=lambda: {"local": 1})
    default_pool: str = "local"
    run_time_limit_s: float = 3600.0
    # Limits on what a user may submit.
    max_spec_bytes: int = 256 * 1024
    # any request body (a sweep is a spec plus its parameters, as JSON)
    max_body_bytes: int = 1024 * 1024
    max_nodes: int = 200
    max_flows: int = 500
    max_duration_s: float = 3600.0
    max_sweep_runs: int = 200
    submit_rate_per_min: float = 60.0
    submit_burst: int = 20
    # Spec validations running at once (threads) and queued behind them; past both a
    # submission is answered 503 (orchestrator/service/validation_gate.py). 128 queued
    # bodies hold at most 32 MiB; bench_api's 50 closed-loop clients stay below it.
    validation_workers: int = Field(default=1, ge=1, le=8)
    validation_queue: int = Field(default=128, ge=0, le=1024)
    scheduler_poll_s: float = 0.5
    # Server-Timing also carries the server's CLOCK_MONOTONIC at the request's arrival in
    # the app and at its answer (`recv`/`sent`, seconds), so a client on the same machine
    # (bench/bench_api_live.py) can split its latency into waiting before the app, the
    # handlers, and waiting after. Off by default: it tells a client the server's uptime.
    server_timing_clock: bool = False
    # A bearer token checked once is trusted this long without a database lookup
    # (orchestrator/service/token_cache.py); a revoked token is refused at most this
    # long after `xcplab user revoke`. 0 looks every request up. Bounded in entries.
    token_cache_s: float = Field(default=5.0, ge=0.0, le=300.0)
    token_cache_entries: int = Field(default=10_000, ge=1, le=1_000_000)
    # Nice value of the API's event-loop thread: above the flow tools and other normal
    # tasks, below the engines' SCHED_FIFO (orchestrator/service/cpu_share.py). 0 leaves
    # the default; a negative value needs CAP_SYS_NICE (logged and ignored without).
    api_nice: int = Field(default=0, ge=-20, le=19)
    # Reserved for tests: "module:function" replacing the real runner
    # (orchestrator.runner.execute_run) with a function of the same signature.
    # Never set it in a deployment.
    test_only_run_function: str | None = None

    @field_validator("pools")
    @classmethod
    def _pools_non_negative(cls, v: dict[str, int]) -> dict[str, int]:
        bad = {k: n for k, n in v.items() if n < 0}
        if bad:
            raise ValueError(f"pool concurrency must be >= 0, got {bad}")
        return v

    @property
    def database_url(self) -> str:
        return self.db_url or f"sqlite:///{self.data_dir / 'xcplab.db'}"

    @property
    def runs_path(self) -> Path:
        return self.runs_dir or self.data_dir / "runs"


def parse_pools(text: str) -> dict[str, int]:
    """`local=1,big=4` -> {"local": 1, "big": 4}; ValueError naming the bad item."""
    pools: dict[str, int] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, n = item.partition("=")
        if not sep or not name or not n.strip().isdigit():
            raise ValueError(f"pool {item!r}: expected NAME=COUNT, e.g. local=1")
        pools[name.strip()] = int(n)
    return pools


_ENV_FIELDS: dict[str, str] = {
    "DATA_DIR": "data_dir", "DB_URL": "db_url", "RUNS_DIR": "runs_dir",
    "ARCHIVES_DIR": "archives_dir",
    "BACKEND": "backend", "INFLUX_URL": "influx_url", "DEFAULT_POOL": "default_pool",
    "RUN_TIME_LIMIT_S": "run_time_limit_s", "MAX_SPEC_BYTES": "max_spec_bytes",
    "MAX_BODY_BYTES": "max_body_bytes",
    "MAX_NODES": "max_nodes", "MAX_FLOWS": "max_flows",
    "MAX_DURATION_S": "max_duration_s", "MAX_SWEEP_RUNS": "max_sweep_runs",
    "SUBMIT_RATE_PER_MIN": "submit_rate_per_min", "SUBMIT_BURST": "submit_burst",
    "SCHEDULER_POLL_S": "scheduler_poll_s", "SERVER_TIMING_CLOCK": "server_timing_clock",
    "VALIDATION_WORKERS": "validation_workers", "VALIDATION_QUEUE": "validation_queue",
    "TOKEN_CACHE_S": "token_cache_s", "TOKEN_CACHE_ENTRIES": "token_cache_entries",
    "API_NICE": "api_nice",
    "TEST_ONLY_RUN_FUNCTION": "test_only_run_function",
}


def settings_from_env(environ: dict[str, str] | None = None, **overrides: Any) -> Settings:
    """Settings from XCPLAB_* variables, then keyword overrides (None = not given)."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for suffix, field in _ENV_FIELDS.items():
        if ENV_PREFIX + suffix in env:
            values[field] = env[ENV_PREFIX + suffix]
    if ENV_PREFIX + "POOLS" in env:
        values["pools"] = parse_pools(env[ENV_PREFIX + "POOLS"])
    values.update({k: v for k, v in overrides.items() if v is not None})
    return Settings(**values)

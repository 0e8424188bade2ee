"""Every limit on what a spec may ask for, in one table, each with where it comes from.

Two groups:

- **Input shape** (`YAML_*`, `MAX_SPEC_BYTES`, `MAX_OVERRIDE*`): bound the work of
  *reading* a spec, checked on the YAML event stream before anything is composed
  (orchestrator/spec/guard.py), for spec files, API bodies, `--set` values and sweep
  `--param` values alike.
- **Values** (`Bound` rows and the counts below): what one machine of this project can
  honour (2 cores, 24 GiB, the userspace engine of router-image/), checked by
  `xcplab validate`, the runner and the service on every spec (orchestrator/spec/bounded.py).
  The service adds its own stricter per-user limits (orchestrator/service/settings.py).

Every range the engine checks too is a row of the one table shared with the engine,
xcplab_contract/bounds.json (`table(...)` below; the engine is built with the same rows),
so a spec that validates is one the engine accepts.
"""

from __future__ import annotations

from xcplab_contract.bounds import Bound
from xcplab_contract.bounds import bound as table

__all__ = ["Bound", "table"]

KiB, MiB, GiB = 2**10, 2**20, 2**30

# -- input shape -----------------------------------------------------------------
# The largest spec in experiments/ is 7 KB; the service accepts 256 KiB. 1 MiB leaves
# room for generated topologies (1000 nodes is ~60 KB) and bounds every later step.
MAX_SPEC_BYTES = 1 * MiB
# The deepest path a spec has is expect[i].when[j].value or a raw queue.params value:
# under 10 levels. 32 keeps every recursive step (libyaml's composer, pydantic, the
# line index) far from Python's recursion limit (1000) and the C stack.
YAML_MAX_DEPTH = 32
# YAML nodes once aliases are expanded: what every later walk (pydantic, resolve, the
# JSON of resolved.json) visits. A 1000-node topology with 1000 flows is ~20 000.
YAML_MAX_NODES = 200_000
# One `--set` / `--param` value (the path=value text) and how many of them.
MAX_OVERRIDE_BYTES = 64 * KiB
MAX_OVERRIDES = 200
# Runs in one CLI sweep (the product of the --param value counts times --repeat),
# checked before any point is built; the service's max_sweep_runs is stricter.
MAX_SWEEP_RUNS = 10_000


# -- per-value bounds --------------------------------------------------------------
CAPACITY = table("link.capacity_bps")
DELAY = table("link.delay_s")
BUFFER_PACKETS = table("link.limit_packets")
BUFFER_BYTES = Bound(
    1_500, 256 * MiB, "B",
    "a queue is RAM of the engine; one MTU is the least that passes a packet")
BUFFER_BDP = Bound(
    0.0, 100.0, "BDP",
    "the seeds use 0.01..2 BDP; the bytes it resolves to are bounded by the plan")
METRICS_INTERVAL = Bound(
    0.010, 60.0, "s",
    "agents sample every engine port and flow each interval; below 10 ms sampling "
    "competes with the engine for the 2 cores and writes >100 MB per minute")
DURATION = Bound(
    0.001, 24 * 3600.0, "s",
    "one day: metrics, logs and the archive grow with the duration")
XCP_INTERVAL = table("xcp.interval_s")

# Memory the engine holds per direction: its queue plus the packets in flight on the
# delay line (capacity x delay / 8). 24 GiB machine: one direction at most 1 GiB, all
# directions together at most 8 GiB, the rest for hosts, agents and the page cache.
# The engine's own limit_bytes bound is the same 1 GiB, so a BDP-sized queue that passes
# here is one the engine accepts.
MAX_DIRECTION_BYTES = int(table("link.limit_bytes").hi)
MAX_TOTAL_BYTES = 8 * GiB

# -- counts ----------------------------------------------------------------------
# Routers: every link end of a router is an engine port with its own AF_PACKET ring;
# bench_engine_scale starts 1000 ports in 0.5-0.6 s at ~214 KB each, and validate + plan of
# a 1000-router trial take ~1.7 s (docs/deployment.md).
MAX_ROUTERS = 1_000
# Nodes, routers and hosts together: one network namespace each, deployed by the agent;
# bench/bench_deploy.py (a chain: routing's worst case) deploys 1000 / 2000 namespaced
# nodes in 2.5 / 6.3 s and plans them in 2.2 / 9.6 s (2026-11-27, load ~2), so a
# 1000-router trial keeps a host per edge router.
MAX_NODES = 2_000
MAX_LINKS = 2_000          # after chains are expanded; two engine ports each
# Ports one router's engine opens: one AF_PACKET ring each. Not measured against the
# 10 s start timeout of agents/engines.py; chosen well above any seed topology (4).
MAX_PORTS_PER_ROUTER = 64
# Counting `parallel`: one xcpperf/iperf3 connection each. 1100 holds seed 001's
# largest case, n = 1024 long flows plus the short flow (Fig. 2).
MAX_FLOWS = 1_100
# Connections in one flow's tool process: xcpperf's own -P limit, and iperf3's
# (it refuses -P past 128).
MAX_PARALLEL_XCPPERF = 1_024
MAX_PARALLEL_IPERF3 = 128
# Generated topologies (spec `topology:`, orchestrator/spec/trial.py): checked before a
# graph is drawn, so generating is bounded too; the generated nodes, links, flows and
# ports then meet the counts above like written ones. A tier generator's router count
# is core x (1 + aggregation x (1 + edge)); it stays within MAX_ROUTERS, and it and the
# hosts within MAX_NODES.
MAX_TIER_ROUTERS = 100      # core routers (a ring past 4)
MAX_TIER_FANOUT = 32        # aggregation per core, edge per aggregation, dumbbells
MAX_HOSTS_PER_EDGE = 16     # hosts hanging off each edge router
MAX_GENERATED_DEGREE = 16   # Barabasi-Albert links per new router (< MAX_PORTS_PER_ROUTER)
MAX_GRAPHML_BYTES = 4 * MiB  # an imported GraphML file (the Topology Zoo's largest: ~1 MB)
MAX_TIMELINE_EVENTS = 10_000
MAX_CHECKS = 1_000
# Metric rows the run directory receives: (duration / metrics_interval) x (link
# directions + flows). ~100 B a row: 20 M rows is ~2 GB of CSV before compression.
MAX_METRIC_ROWS = 20_000_000

# -- packet captures (orchestrator/spec/captures.py) ----------------------------
CAPTURE_SNAPLEN = Bound(
    64, 65_535, "B",
    "the largest IPv4 packet; under 64 B not even Ethernet, IPv4 and the shim fit")
CAPTURE_BYTES = Bound(
    10_000, 1_000_000_000, "B",
    "one capture file on the run directory's disk; the run's tar.gz holds a second copy")
CAPTURE_PACKETS = Bound(
    1, 100_000_000, "pkts",
    "a packet budget; the byte budget max_bytes bounds the file in any case")
# Captured directions of one run: one dumpcap process each (measured cost: docs/captures.md).
MAX_CAPTURES = 32
# All capture files of one run together (each at most its max_bytes, plus one packet).
MAX_CAPTURE_TOTAL_BYTES = 4_000_000_000

# -- queue parameters --------------------------------------------------------------
# Each queue kind's fields carry their row of xcplab_contract/bounds.json
# (orchestrator/spec/queues/), checked by orchestrator/spec/bounded.py.

# -- web-like short flows (flow objects:, traffic.web:; docs/web-traffic.md) ----
# xcpperf's own bounds (host-image/src/app/object_schedule.hh): objects per process
# (one local port each; the schedule travels on one command line, under the kernel's
# 128 KiB per argument) and bytes per object.
MAX_OBJECTS_PER_FLOW = 4_096
MAX_OBJECT_BYTES = 2**30
# Connections one xcpperf holds open at once; each one's send buffer holds its object
# up to 16 MiB, so 256 of them stay under 4 GiB even with every object that large.
MAX_CONCURRENT_OBJECTS = 256
# All objects of a run: each is a connection, a metrics/fct.csv row, a log line.
MAX_OBJECTS = 20_000
MAX_OBJECT_BYTES_TOTAL = 64 * GiB  # ~9 min of traffic at 1 Gb/s
# traffic.web: sessions, their Poisson arrival rate (per second) and mean objects each.
MAX_WEB_SESSIONS = 10_000
MAX_WEB_ARRIVAL_RATE = 1_000.0
MAX_WEB_OBJECTS_PER_SESSION = 1_000.0

# -- app flows (flow app:, docs/socket-stack.md) -----------------------------------
# One command of an app flow's pair, as written, and its words once split: a command
# line, not a script (the kernel's own limit per argument is 128 KiB).
MAX_APP_COMMAND_CHARS = 4_096
MAX_APP_ARGS = 256
# App flows in one run: each runs a server and a client process (plus one xcp-stackd per
# host taking part), real programs whose CPU the 2-core test machines must carry.
MAX_APP_FLOWS = 64

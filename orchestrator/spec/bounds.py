"""Every limit on what a spec may ask for, in one table, each with where it comes from.

Two groups:

- **Input shape** (`YAML_*`, `MAX_SPEC_BYTES`, `MAX_OVERRIDE*`): bound the work of
  *reading* a spec, checked on the YAML event stream before anything is composed
  (orchestrator/spec/guard.py), for spec files, API bodies, `--set` values and sweep
  `--param` values alike.
"""

from __future__ import annotations

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

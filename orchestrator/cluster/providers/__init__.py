"""Where a cluster's machines come from: a provider turns a provider file into an
inventory (orchestrator/cluster/inventory.py), and everything after that — check,
provision, place, run, clean — is the same whatever the provider.

- `static` (static.py): machines that exist now, listed in an inventory;
- `g5k` (g5k.py): machines reserved on Grid'5000 through its REST API (an OAR job, then a
  kadeploy deployment when an environment is named), described from its reference API.

    xcplab cluster acquire PROVIDER.yaml --out DIR   # DIR/inventory.yaml, DIR/reservation.json
    xcplab cluster release DIR                       # gives the machines back (g5k: the job)
"""

from __future__ import annotations

from orchestrator.cluster.providers.base import Provider, Reservation, load_provider, release

__all__ = ["Provider", "Reservation", "load_provider", "release"]

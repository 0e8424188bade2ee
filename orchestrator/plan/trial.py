"""A resolved trial record (orchestrator.spec.trial_models.RTrial) as the plan's `Trial`."""

from __future__ import annotations

from orchestrator.spec.trial_models import RTrial
from xcplab_contract.plan import Trial


def plan_trial(r: RTrial | None) -> Trial | None:
    if r is None:
        return None
    return Trial(generator=r.generator, topology_seed=r.topology_seed, tiers=dict(r.tiers),
                 protocol=r.protocol, fraction=r.fraction, strategy=r.strategy,
                 deployment_seed=r.deployment_seed, deployed=tuple(r.deployed),
                 default_queue=r.default_queue, matrix=r.matrix, traffic_seed=r.traffic_seed,
                 traffic_flows=tuple(r.traffic_flows), web_seed=r.web_seed,
                 web_flows=tuple(r.web_flows), web_sessions=r.web_sessions,
                 web_objects=r.web_objects)


def render_trial(t: Trial) -> list[str]:
    """The TRIAL section of `xcplab plan`."""
    out = ["TRIAL"]
    if t.generator:
        counts = {tier: sum(1 for v in t.tiers.values() if v == tier)
                  for tier in ("core", "aggregation", "edge")}
        out.append(f"topology   {t.generator} (seed {t.topology_seed}): "
                   + ", ".join(f"{n} {tier}" for tier, n in counts.items() if n))
    if t.protocol:
        out.append(f"deployment {t.protocol} on {len(t.deployed)} of {len(t.tiers)} routers "
                   f"(fraction {t.fraction:g}, {t.strategy}, seed {t.deployment_seed}); "
                   f"the others {t.default_queue}")
        out.append(f"deployed   {' '.join(t.deployed) or '-'}")
    if t.matrix:
        out.append(f"traffic    {t.matrix} matrix (seed {t.traffic_seed}): "
                   f"{len(t.traffic_flows)} flows")
    if t.web_flows:
        out.append(f"web        {t.web_sessions} sessions, {t.web_objects} objects (seed "
                   f"{t.web_seed}) in {len(t.web_flows)} flows: {' '.join(t.web_flows)}")
    return [*out, ""]

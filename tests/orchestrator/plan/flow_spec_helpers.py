"""A three-host, one-router spec for tests of flow fields: FLOWS and the body of
defaults.flow are filled in; flows start at line 16."""

from __future__ import annotations

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import SpecError
from xcplab_contract.plan import Plan

THREE_HOSTS = """\
name: flows
duration: 10s
defaults:
  link: {capacity: 10Mbps, delay: 5ms}
  flow: {DEFAULTS}
nodes:
  h1: {role: host}
  h2: {role: host}
  h3: {role: host}
  r1: {role: router}
links:
  - {a: h1, b: r1}
  - {a: h2, b: r1}
  - {a: h3, b: r1}
flows:
FLOWS
"""


def three_hosts(flows: str, defaults: str = "parallel: 1") -> str:
    return THREE_HOSTS.replace("DEFAULTS", defaults).replace("FLOWS", flows)


def plan_of(text: str, file: str) -> Plan:
    return make_plan(load_spec_text(text, file), "20261122-000000-flows")


def problems(text: str, file: str) -> list[str]:
    with pytest.raises(SpecError) as e:
        load_spec_text(text, file)
    return [str(p) for p in e.value.problems]

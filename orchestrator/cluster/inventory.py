"""The inventory: the machines a cluster run may use, as the user writes them (YAML).

Pure data, validated like a spec (pydantic, units as text, unknown keys refused);
cross-item rules (unique names, unique addresses, key files that exist) live in
`load.py` because they need the file's lines.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from orchestrator.cluster import bounds
from orchestrator.spec.types import Name, Rate

# A DNS name or an IPv4/IPv6 literal; ssh and Ansible take either. No spaces, no
# shell or option characters (an address starting with '-' would be an ssh option).
_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.:-]{0,252}$")
# Install prefix on the machine: absolute, no '..', no spaces (it ends up in commands).
_PREFIX = re.compile(r"^/[A-Za-z0-9._/+-]{1,200}$")
_PYTHON = re.compile(r"^[A-Za-z0-9._/+-]{1,200}$")
_USER = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")


def matching(rx: re.Pattern[str], what: str) -> AfterValidator:
    """A pydantic check that a string field matches RX (the message says it is not WHAT)."""
    def check(v: str) -> str:
        if not rx.match(v):
            raise ValueError(f"{v!r} is not {what}")
        return v
    return AfterValidator(check)


def _no_parent(v: str) -> str:
    if ".." in v.split("/"):
        raise ValueError(f"{v!r} climbs out with '..'; give the install directory itself")
    return v


Host = Annotated[str, matching(_HOST, "a host name or IP address")]
Python = Annotated[str, matching(_PYTHON, "a python3 command or absolute path")]
User = Annotated[str, matching(_USER, "a login name (lower case letters, digits, _ -)")]
Prefix = Annotated[str, matching(_PREFIX, "an absolute path of letters, digits and . _ / + -"),
                   AfterValidator(_no_parent)]


class Ssh(BaseModel):
    """How the controller logs in (key only: a cluster run never types a password)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user: User = "root"
    key: Annotated[str, Field(min_length=1, max_length=bounds.MAX_PATH_CHARS)]
    port: Annotated[int, Field(ge=1, le=65535)] = 22


class Machine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Name
    address: Host
    ssh: Ssh
    cores: Annotated[int, Field(ge=1, le=bounds.MAX_CORES)]
    nic_capacity: Annotated[Rate, Field(ge=bounds.MIN_NIC_BPS, le=bounds.MAX_NIC_BPS)]
    mtu: Annotated[int, Field(ge=bounds.MIN_MTU, le=bounds.MAX_MTU)] = 1500
    roles: Annotated[list[Name], Field(max_length=bounds.MAX_ROLES)] = []
    # Where provisioning installs the agent and binaries on this machine.
    prefix: Prefix = "/opt/xcplab"
    # The interpreter that runs the agent (and Ansible's modules): found on the login
    # PATH by default; an absolute path where the one with pyroute2 is elsewhere.
    python: Python = "python3"


class Inventory(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Name
    # The controller's known_hosts for these machines; host keys are checked strictly
    # when given, else ssh's own known_hosts decides.
    known_hosts: Annotated[str | None, Field(max_length=bounds.MAX_PATH_CHARS)] = None
    machines: Annotated[list[Machine], Field(min_length=1, max_length=bounds.MAX_MACHINES)]
    # Who pays VXLAN's 50 bytes on a link crossing machines (orchestrator/cluster/vxlan.py):
    # `underlay`: the underlay's MTU must be >= 1550, the emulated links keep 1500 (a
    # narrower underlay is refused); `reduce_mtu`: every emulated link of a run with a
    # crossing link gets the smallest crossing underlay MTU - 50, recorded in the plan.
    vxlan_overhead: Literal["underlay", "reduce_mtu"] = "underlay"

    def machine(self, name: str) -> Machine:
        for m in self.machines:
            if m.name == name:
                return m
        raise KeyError(name)

"""Timeline events in kernel router mode (Linux forwarding, no engine).

Kernel routers emulate nothing, so of the link events only down/up can be
honoured (by the interfaces' administrative state); the rest is reported as not
emulated on the event rather than silently ignored.
"""

from __future__ import annotations

import os
from typing import Any

from agents import nsops, rtnl
from agents.deploy import Deployment
from xcplab_contract.plan import Event, Plan


def kernel_link_event(plan: Plan, dep: Deployment, e: Event, mine: set[str]) -> Any:
    if e.action not in ("link_down", "link_up"):
        return f"{e.action} not emulated in kernel router mode"
    link = plan.link(e.target)
    up = e.action == "link_up"
    targets = [(dep.ns_fds[plan.node(ep.node).netns], ep.ifname) for ep in (link.a, link.b)
               if ep.node in mine]

    def work() -> None:
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            for fd, ifname in targets:
                with nsops.inside(fd, home), rtnl.Batch() as b:
                    b.link_state(rtnl.ifindex(ifname), up, f"{ifname} {'up' if up else 'down'}")
                    b.commit()
        finally:
            os.close(home)

    nsops.ns_thread(work)
    return f"{link.id} {'up' if up else 'down'}"

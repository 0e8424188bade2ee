"""How the API shares the machine with the runs it executes (issue 19, docs/web.md).

Order of precedence on the CPUs: the run's engines first (SCHED_FIFO, the netns
backend's `engine_priority`: a late engine makes a run unfaithful, a late status answer
is only late); the API's event loop, the scheduler, the runner threads and the flow
tools and agents they start at the default nice. `api_nice` can raise the event loop
alone; it is 0 by default because -5 made no measurable difference to the status p99
with two CPU-bound nice-0 processes beside a run (docs/web.md, issue 19).

The nice value is the loop thread's own (Linux nice is per thread): set after the
scheduler has started, so the scheduler thread, the runner threads it creates and the
processes they spawn keep the default; the thread-pool workers the loop creates later
(validation, slower pages) inherit it, as they serve requests too.
"""

from __future__ import annotations

import logging
import os
import threading

log = logging.getLogger("xcplab.service")


def prioritise_this_thread(nice: int) -> int | None:
    """Sets the calling thread's nice value to NICE; returns the value in force, or
    None when it may not (no CAP_SYS_NICE for a negative value: logged, not fatal)."""
    tid = threading.get_native_id()
    if os.getpriority(os.PRIO_PROCESS, tid) == nice:
        return nice
    try:
        os.setpriority(os.PRIO_PROCESS, tid, nice)
    except PermissionError:
        log.warning("api_nice=%d not applied (needs CAP_SYS_NICE); the event loop runs at "
                    "nice %d", nice, os.getpriority(os.PRIO_PROCESS, tid))
        return None
    return os.getpriority(os.PRIO_PROCESS, tid)

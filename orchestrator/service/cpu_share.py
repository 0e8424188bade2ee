"""How the API shares the machine with the runs it executes (issue 19, docs/web.md).

Order of precedence on the CPUs: the run's engines (SCHED_FIFO, the netns backend's
`engine_priority`: a late engine makes a run unfaithful), then the API's event loop
(`api_nice`, default -5: a late status answer is only late, but it costs about 0.15
core at 100 requests/s and waits behind every runnable task when it has no more
weight than they), then everything else at the default nice: the scheduler and the
runner threads, the flow tools and agents they start, compilers and shells of the
machine's other users.

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

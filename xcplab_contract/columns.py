"""Column layout of every metrics file in `run_dir/metrics/` (contract with analysis).

t_s is seconds since the experiment's t=0. Counters are cumulative; rates and
utilisation are per sampling interval. Empty cell = not applicable (e.g. XCP
state on a DropTail port).
"""

from __future__ import annotations

XCP_COLUMNS = ("xcp_d", "xcp_phi", "xcp_h", "xcp_y", "xcp_Q", "xcp_xi_p", "xcp_xi_n",
               "xcp_pos_pool", "xcp_neg_pool")

COLUMNS: dict[str, tuple[str, ...]] = {
    # link: busy_ns is the serialiser's cumulative busy time in emulated time (engine
    # links only; empty where the writer has no serialiser of its own: kernel rows, ns-2).
    "link": ("t_s", "node", "port", "link", "capacity_bps", "tx_bytes", "tx_packets",
             "rx_bytes", "rx_packets", "rate_bps", "utilization", "queue_pkts", "queue_bytes",
             "drops_queue", "drops_loss", "drops_ttl", "drops_noroute", "drops_malformed",
             "drops_link_down", "busy_ns", *XCP_COLUMNS),
    "flow": ("t_s", "flow", "stream", "proto", "src", "dst", "bytes", "throughput_bps",
             "cwnd_bytes", "srtt_us", "retransmits", "timeouts", "feedback_bytes"),
    "event": ("t_s", "kind", "target", "detail"),
    # Engine timers (wake-ups) and link events (packet departures and deliveries):
    # how many ran, how many more than 1 / 5 ms after their scheduled instant;
    # steal_s: CPU seconds the hypervisor withheld from the machine (all CPUs).
    # Frames lost outside the model (router-image/CONTROL.md): rx_socket_drops (the
    # kernel's receive ring overflowed), tx_errors (the kernel refused a frame),
    # rx_truncated (frame over 2048 B), arrival_stamps_clamped (receive stamps moved).
    # spin_s: of cpu_s, the seconds spent spinning for the next deadline (work yields
    # it, so headroom is judged on cpu_s - spin_s); windows_over_cpu_cap: 10 ms windows
    # in which the engine was over its CPU cap and served due events in batches;
    # sched_wait_s: seconds the engine process was runnable but not running (schedstat).
    "engine": ("t_s", "node", "late_timers", "max_lateness_us", "cpu_s", "timers",
               "timers_late_1ms", "events", "events_late_1ms", "events_late_5ms",
               "max_event_lateness_us", "steal_s",
               "rx_socket_drops", "tx_errors", "rx_truncated", "arrival_stamps_clamped",
               "spin_s", "windows_over_cpu_cap", "sched_wait_s"),
    # XCP-i (per upstream router: estimate, truth, requests, timeouts) and the XCP-TCP
    # fairness stage (p_drop, flow-count estimates, BW_XCP): whatever numeric state the
    # engine's qdisc stage reports, in long form so new fields need no schema change.
    "xcpi": ("t_s", "node", "port", "link", "key", "value"),
    "fairness": ("t_s", "node", "port", "link", "key", "value"),
    # iXCP ports (y0, matching / non-matching traffic, the shuffle pools; QUEUES.md
    # "ixcp"), long form like the two above.
    "ixcp": ("t_s", "node", "port", "link", "key", "value"),
    # Flow tools (xcpperf, iperf3), per interval: `proc` is the process table's key
    # ("f1.client", "f1.server"), cumulative `cpu_s` (user + system, all threads),
    # `sched_wait_s` (runnable but waiting for a CPU) and `sched_slices` (times run),
    # both over all threads; `sched_wait_thread_s`: per interval the wait of the thread
    # that waited longest, summed (what delays the flow: analysis/host_procs._diffs).
    "procs": ("t_s", "proc", "flow", "kind", "tool", "pid", "cpu_s", "sched_wait_s",
              "sched_slices", "sched_wait_thread_s"),
    # Web-like short flows (xcpperf --objects; docs/web-traffic.md), one row per object
    # when its flow's client exits: t_s when it concluded (its start when it never
    # did), `start_s` its scheduled start in run time, `fct_s` from SYN sent to last
    # byte acknowledged (empty unless complete), `status` complete | failed |
    # incomplete | not_started, `waited` 1 when it waited for a free connection slot.
    "fct": ("t_s", "flow", "object", "proto", "src", "dst", "start_s", "bytes", "fct_s",
            "status", "retransmits", "timeouts", "waited"),
}

# InfluxDB: which columns are tags (the rest are fields, t_s is the timestamp).
TAGS: dict[str, tuple[str, ...]] = {
    "link": ("node", "port", "link"),
    "flow": ("flow", "stream", "proto", "src", "dst"),
    "event": ("kind", "target"),
    "engine": ("node",),
    "xcpi": ("node", "port", "link", "key"),
    "fairness": ("node", "port", "link", "key"),
    "ixcp": ("node", "port", "link", "key"),
    "procs": ("proc", "flow", "kind", "tool"),
    "fct": ("flow", "proto", "src", "dst", "status"),
}

"""What one host's xcp-stackd reports (--json-stream, host-image/src/stackd/stats_report.hh):
that it serves, which ports listen, and every connection's cumulative counters, read
from the daemon's stdout by a thread. The agent samples `app:` flows from it the way it
samples xcpperf's own stream (agents/flow_sampler.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from agents.flow_sampler import StreamSample
from agents.line_pump import json_object, pump_lines

Match = Callable[[dict[str, Any]], bool]


@dataclass
class StackdReader:
    host: str
    # the clock that stamps closes: the agent's (AgentRuntime.clock.now), tests a fake one
    now: Callable[[], float] = time.monotonic
    started: threading.Event = field(default_factory=threading.Event)
    listening: set[int] = field(default_factory=set)
    # socket id ("LPORT-ADDR:RPORT") -> its latest stream object; closed ones keep their last
    streams: dict[str, dict[str, Any]] = field(default_factory=dict)
    closed: set[str] = field(default_factory=set)
    # socket id -> now() when its `closed` line was read (a server whose client
    # runs on another machine: its side's end, agents/app_flows.ServerSides)
    closed_at: dict[str, float] = field(default_factory=dict)
    bad_lines: int = 0
    changed: threading.Condition = field(default_factory=threading.Condition)
    _feedback_seen: dict[str, int] = field(default_factory=dict)

    def feed(self, line: str) -> None:
        obj, bad = json_object(line)
        self.bad_lines += bad
        if obj is None:
            return
        event, data = obj.get("event"), obj.get("data")
        with self.changed:
            if event == "start":
                self.started.set()
            elif event == "listen" and isinstance(data, dict):
                self.listening.add(int(data.get("port", 0)))
            elif event == "interval" and isinstance(data, dict):
                for st in data.get("streams", []):
                    if isinstance(st, dict) and st.get("socket") not in self.closed:
                        self.streams[str(st.get("socket"))] = st
            elif event == "closed" and isinstance(data, dict):
                key = str(data.get("socket"))
                self.streams[key] = data
                self.closed.add(key)
                self.closed_at.setdefault(key, self.now())
            self.changed.notify_all()

    def pump(self, stream: IO[bytes], tee: IO[bytes] | None = None) -> threading.Thread:
        """Read lines in a thread; `tee` keeps a copy of the raw output (logs/)."""
        return pump_lines(stream, self.feed, f"stackd-reader-{self.host}", tee)

    def wait_for(self, ready: Callable[[], bool], timeout_s: float,
                 alive: Callable[[], bool]) -> bool:
        """Until ready() (True), the timeout or not alive() (False)."""
        with self.changed:
            return self.changed.wait_for(lambda: ready() or not alive(), timeout_s) and ready()

    def matching(self, match: Match) -> list[dict[str, Any]]:
        with self.changed:
            return [dict(st) for st in self.streams.values() if match(st)]

    def all_closed(self, match: Match) -> bool:
        with self.changed:
            return all(k in self.closed for k, st in self.streams.items() if match(st))

    def last_close(self, match: Match) -> float | None:
        """now() of the latest close among the matching connections."""
        with self.changed:
            times = [self.closed_at[k] for k, st in self.streams.items()
                     if match(st) and k in self.closed_at]
        return max(times, default=None)

    def samples(self, match: Match) -> list[StreamSample]:
        """One cumulative sample per matching connection (stream "host:LPORT-ADDR:RPORT");
        feedback is the change since the previous call, as xcpperf reports it per interval."""
        out = []
        for st in self.matching(match):
            key = f"{self.host}:{st.get('socket')}"
            fb = int(st.get("feedback_bytes", 0) or 0)
            prev = self._feedback_seen.get(key, 0)
            self._feedback_seen[key] = fb
            out.append(StreamSample(stream=key, bytes=int(st.get("bytes", 0) or 0),
                                    cwnd_bytes=st.get("cwnd", ""),
                                    srtt_us=st.get("srtt_us", ""),
                                    retransmits=int(st.get("retransmits", 0) or 0),
                                    feedback_bytes=fb - prev,
                                    timeouts=int(st.get("timeouts", 0) or 0)))
        return out

"""The backend interface: realise a plan, run it, tear it down.

Small on purpose (place / prepare / apply / start / messages / exec / collect / destroy)
and a context manager: leaving the `with` block always destroys, whatever
happened inside it. Two verbs need no run in hand and are class methods: `clean`
(remove what runs left on the backend's machines, e.g. after a crash) and
`runs_left` (which runs left something).
"""

from __future__ import annotations

import queue
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

from xcplab_contract.agent import CleanResult
from xcplab_contract.plan import Plan


def limits_refusal(backend: str, plan: Plan) -> list[str]:
    """The refusal of per-node limits (cpuset, memory) by a backend that runs every node's
    processes in its machine's own cgroups: only the docker backend applies them."""
    limited = [n.name for n in plan.nodes if n.limits is not None]
    if not limited:
        return []
    return [f"nodes.{limited[0]}.limits"
            + (f" (and {len(limited) - 1} more node(s))" if len(limited) > 1 else "")
            + f": per-node limits (cpuset, memory) are applied by the docker backend only; "
              f"{backend} runs every node's processes in its machines' own cgroups (run with "
              "--backend docker, or remove the limits)"]


def xdp_refusal(backend: str, plan: Plan) -> list[str]:
    """The refusal of `io: xdp` hosts (xcpperf --xdp, orchestrator/spec/host_io.py) by a
    backend whose hosts it was not built or tested for: only netns runs them."""
    hosts = sorted({h for f in plan.flows for h, argv in ((f.src, f.client_argv),
                                                          (f.dst, f.server_argv))
                    if "--xdp" in argv})
    if not hosts:
        return []
    return [f"nodes.{hosts[0]}.io: xdp"
            + (f" (and {len(hosts) - 1} more host(s))" if len(hosts) > 1 else "")
            + f": the AF_XDP host path runs on the netns backend only; {backend} cannot "
              "(run with --backend netns, or use io: kernel)"]


class Backend(ABC):
    name: ClassVar[str]
    # "emulated" (real packets through emulated links) or "simulated" (a simulator's
    # model): the analysis judges an emulation's fidelity, not a simulator's.
    kind: ClassVar[str] = "emulated"

    def __init__(self, run_dir: Path, options: dict[str, Any] | None = None):
        self.run_dir = run_dir
        self.options = dict(options or {})

    @classmethod
    def unsupported(cls, plan: Plan) -> list[str]:
        """What of `plan` this backend cannot realise, one sentence per feature (pure)."""
        return []

    def place(self, plan: Plan) -> Plan:
        """The plan this backend realises, before it is written to plan.json: the cluster
        backend assigns every node a machine; one-machine backends keep it as it is."""
        return plan

    @abstractmethod
    def prepare(self, plan: Plan) -> None:
        """Check this backend can realise `plan` (privileges, tools); touch nothing."""

    @abstractmethod
    def apply(self, plan: Plan) -> dict[str, Any]:
        """Create every node, link and long-lived process; returns timings."""

    @abstractmethod
    def start(self, at: float | None = None) -> None:
        """t = 0: play the timeline and stream samples, now or at wall-clock time `at`
        (seconds since the epoch, as time.time()) so several machines start together."""

    @abstractmethod
    def messages(self, timeout_s: float) -> Iterator[dict[str, Any]]:
        """Streamed agent messages (rows, event, error, done) received within timeout_s."""

    @abstractmethod
    def stop(self) -> None:
        """Stop playing and sampling early (cancel)."""

    @abstractmethod
    def exec(self, node: str, argv: list[str], timeout_s: float = 10.0) -> dict[str, Any]:
        """Run a command inside a node; returns rc/stdout/stderr."""

    @abstractmethod
    def collect(self) -> None:
        """Bring logs and files the nodes produced into run_dir (no-op when local)."""

    @abstractmethod
    def destroy(self) -> dict[str, Any]:
        """Remove everything this run created; idempotent; returns timings/counts."""

    @classmethod
    def clean(cls, runs: Sequence[str] | None, *, include_running: bool = False,
              options: dict[str, Any] | None = None) -> CleanResult:
        """Remove what the runs `runs` (None = every run whose agent has exited; with
        include_running, every run) left on this backend's machines, selected by their
        state and tags, never by pattern. A backend that leaves nothing outside its run
        directory keeps this default."""
        return CleanResult()

    @classmethod
    def runs_left(cls, options: dict[str, Any] | None = None) -> list[str]:
        """Ids of the runs that left state on this backend's machines."""
        return []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()


def drain(q: queue.Queue[dict[str, Any]], timeout_s: float) -> Iterator[dict[str, Any]]:
    """Yield what is queued now, waiting up to timeout_s for the first item."""
    try:
        yield q.get(timeout=timeout_s)
    except queue.Empty:
        return
    while True:
        try:
            yield q.get_nowait()
        except queue.Empty:
            return

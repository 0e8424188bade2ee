"""The simulated twin: the plan as an ns-2.35 script, run, its samples as metrics rows.

Everything lives in run_dir/ns2/: `run.tcl` (the script), `mapping.json` (what
each plan object became, ns-2's version, every substitution), `samples.tr` (the
script's raw samples) and ns's stdout/stderr. A plan using a feature ns-2.35
lacks is refused in `prepare` (and by `xcplab validate --backend ns2`).

Options (`--backend-opt key=value`): `ns` — the ns binary (default: `ns` on PATH).
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from orchestrator.backends.base import Backend, drain, xdp_refusal
from orchestrator.backends.ns2.mapping import (
    NS2_DEFAULTS_READ,
    NS_VERSION_EXPECTED,
    parameter_record,
    refusals,
)
from orchestrator.backends.ns2.script import write_script
from orchestrator.backends.ns2.traces import parse_samples
from xcplab_contract.errors import XcplabError
from xcplab_contract.plan import Plan

OPTIONS = ("ns",)
ROWS_PER_MESSAGE = 5000


def _ns_lines(ns: str, script: str) -> list[str]:
    try:
        p = subprocess.run([ns], input=script + "exit 0\n", capture_output=True, text=True,
                           timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise XcplabError(f"{ns}: cannot run: {e}") from e
    out = p.stdout.strip().splitlines()
    if p.returncode != 0 or not out:
        raise XcplabError(f"{ns}: probe script failed (exit {p.returncode}): {p.stderr.strip()}")
    return out


def ns_version(ns: str) -> str:
    """ns-2's own version string ("2.35"), from a one-line script on stdin."""
    return _ns_lines(ns, "puts [ns-version]\n")[-1].strip()


def ns_probe(ns: str) -> dict[str, Any]:
    """The installed ns: its version, its Debian package, and the defaults the mapping relies
    on (NS2_DEFAULTS_READ), read from the binary; a default other than the one assumed is
    refused (the packet sizes would be wrong)."""
    keys = list(NS2_DEFAULTS_READ)
    script = "puts [ns-version]\n" + "".join(f"puts [{cls} set {var}]\n" for cls, var in keys)
    out = _ns_lines(ns, script)
    if len(out) != len(keys) + 1:
        raise XcplabError(f"{ns}: probe printed {len(out)} lines, expected {len(keys) + 1}")
    defaults: dict[str, Any] = {}
    for (cls, var), text in zip(keys, out[1:], strict=True):
        value: Any = text.strip()
        try:
            value = float(value) if "." in value else int(value)
        except ValueError:
            pass
        want = NS2_DEFAULTS_READ[(cls, var)]
        if want is not None and str(value) != str(want):
            raise XcplabError(f"{ns}: {cls} {var} is {value}, the ns2 backend's mapping "
                              f"assumes {want}")
        defaults[f"{cls} {var}"] = value
    return {"ns_version": out[0].strip(), "package": _package(ns), "defaults": defaults}


def _package(ns: str) -> str:
    """The Debian package that installed `ns` ("ns2 2.35+dfsg-5"), or why it is unknown."""
    path = shutil.which(ns)
    if path is None:
        return "unknown: not on PATH"
    try:
        owner = subprocess.run(["dpkg-query", "-S", str(Path(path).resolve())],
                               capture_output=True, text=True, timeout=10, check=False)
        pkg = owner.stdout.split(":", 1)[0].strip() if owner.returncode == 0 else ""
        if not pkg:
            return f"unknown: {path} belongs to no Debian package"
        ver = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True,
                             text=True, timeout=10, check=False)
        return f"{pkg} {ver.stdout.strip()}"
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unknown: {e}"


class Ns2Backend(Backend):
    name = "ns2"
    kind: ClassVar[str] = "simulated"

    def __init__(self, run_dir: Path, options: dict[str, Any] | None = None):
        super().__init__(run_dir, options)
        for k in self.options:
            if k not in OPTIONS:
                raise XcplabError(f"ns2 backend: unknown option {k!r} "
                                  f"(valid: {', '.join(OPTIONS)})")
        self.ns = str(self.options.get("ns", "ns"))
        self.plan: Plan | None = None
        self.probe: dict[str, Any] = {}
        self.mapping: dict[str, Any] = {}
        self.proc: subprocess.Popen[str] | None = None
        self.stream: queue.Queue[dict[str, Any]] = queue.Queue()
        self.thread: threading.Thread | None = None
        self.stopped = threading.Event()

    @classmethod
    def unsupported(cls, plan: Plan) -> list[str]:
        return refusals(plan) + xdp_refusal(cls.name, plan)

    @property
    def dir(self) -> Path:
        return self.run_dir / "ns2"

    def prepare(self, plan: Plan) -> None:
        problems = refusals(plan)
        if problems:
            raise XcplabError("ns-2.35 cannot run this plan:\n  " + "\n  ".join(problems))
        if shutil.which(self.ns) is None:
            raise XcplabError(f"{self.ns} not found (Debian package ns2)")
        self.probe = ns_probe(self.ns)
        version = self.probe["ns_version"]
        if version != NS_VERSION_EXPECTED:
            raise XcplabError(f"{self.ns} is ns-{version}; the ns2 backend writes "
                              f"ns-{NS_VERSION_EXPECTED} scripts")

    def apply(self, plan: Plan) -> dict[str, Any]:
        self.plan = plan
        self.dir.mkdir(parents=True, exist_ok=True)
        text, mapping = write_script(plan, "samples.tr")  # ns runs in run_dir/ns2
        binary = shutil.which(self.ns) or self.ns
        self.mapping = {**mapping, "ns_version": self.probe["ns_version"], "ns": binary,
                        "ns_package": self.probe["package"],
                        "ns_defaults": self.probe["defaults"]}
        (self.dir / "run.tcl").write_text(text)
        (self.dir / "mapping.json").write_text(json.dumps(self.mapping, indent=2) + "\n")
        substitutions = {f["id"]: f["substitutions"] for f in mapping["flows"]
                         if f["substitutions"]}
        # what the manifest records of this backend (orchestrator/archive/manifest.py)
        provenance = {"simulator": f"ns-{self.probe['ns_version']}", "binary": binary,
                      "package": self.probe["package"],
                      "parameters": parameter_record(mapping, self.probe["defaults"])}
        return {"kind": self.kind, "simulator": f"ns-{self.probe['ns_version']}",
                "script": "ns2/run.tcl", "mapping": "ns2/mapping.json",
                "substitutions": substitutions, "provenance": provenance}

    def start(self, at: float | None = None) -> None:  # a simulation: wall clock unused
        assert self.plan is not None
        out = open(self.dir / "ns.stdout", "w")  # noqa: SIM115 - closed by the thread
        err = open(self.dir / "ns.stderr", "w")  # noqa: SIM115
        self.proc = subprocess.Popen([self.ns, str(self.dir / "run.tcl")], cwd=self.dir,
                                     stdout=out, stderr=err, text=True)
        self.thread = threading.Thread(target=self._finish, args=(out, err),
                                       name="xcplab-ns2", daemon=True)
        self.thread.start()

    def _finish(self, out: Any, err: Any) -> None:
        assert self.proc is not None and self.plan is not None
        rc = self.proc.wait()
        out.close()
        err.close()
        if self.stopped.is_set():
            return
        if rc != 0:
            tail = (self.dir / "ns.stderr").read_text()[-2000:]
            self.stream.put({"type": "error", "fatal": True,
                             "error": f"ns exited {rc}: {tail.strip()}"})
            return
        try:
            with open(self.dir / "samples.tr") as fh:
                links, flows = parse_samples(fh, self.mapping)
        except (OSError, XcplabError) as e:
            self.stream.put({"type": "error", "fatal": True, "error": str(e)})
            return
        for measurement, rows in (("link", links), ("flow", flows),
                                  ("event", self._events())):
            for i in range(0, len(rows), ROWS_PER_MESSAGE):
                self.stream.put({"type": "rows", "measurement": measurement,
                                 "rows": rows[i:i + ROWS_PER_MESSAGE]})
        self.stream.put({"type": "done", "t_s": self.plan.duration_s,
                         "timeline_max_lateness_ms": None})

    def _events(self) -> list[dict[str, Any]]:
        """The flows' starts and stops and the link changes, at the instants the script
        scheduled them (every other action is refused)."""
        assert self.plan is not None
        return [{"t_s": e.t_s, "kind": e.action, "target": e.target,
                 "detail": {"simulated": True, **({k: v for k, v in e.params.items()}
                                                  if e.action == "set_link" else {})}}
                for e in self.plan.timeline
                if e.action in ("flow_start", "flow_stop", "set_link")]

    def messages(self, timeout_s: float) -> Iterator[dict[str, Any]]:
        return drain(self.stream, timeout_s)

    def stop(self) -> None:
        self.stopped.set()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()

    def exec(self, node: str, argv: list[str], timeout_s: float = 10.0) -> dict[str, Any]:
        raise XcplabError(f"ns2 backend: node {node} is simulated; there is nothing to exec in")

    def collect(self) -> None:
        """Everything is written straight into run_dir/ns2."""

    def destroy(self) -> dict[str, Any]:
        self.stop()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.thread is not None:
            self.thread.join(timeout=10)
        return {"ns_exit": self.proc.returncode if self.proc else None}

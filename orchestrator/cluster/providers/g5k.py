"""`provider: g5k`: machines reserved on Grid'5000 through its REST API.

    provider: g5k
    name: g5k-xcp               # the inventory's name
    site: nancy
    cluster: gros
    nodes: 3                    # 1..64
    walltime: "01:00:00"        # HH:MM[:SS], at most 168 h
    environment: debian12-min   # kadeploy environment: the agent needs root, which only a
                                # deployed node gives (job type `deploy`)
    key: ~/.ssh/id_ed25519      # private key for the inventory; KEY.pub goes to kadeploy
    mtu: 1500                   # the production network's MTU (not in the reference API)
    vxlan_overhead: reduce_mtu  # who pays VXLAN's 50 bytes on a 1500-byte underlay
    queue: default              # optional: project, api (https://api.grid5000.fr/stable)

acquire, the same steps EnOSlib's G5k provider takes (enoslib/infra/enos_g5k), spoken
directly to the API with the standard library:

1. POST {api}/sites/{site}/jobs  {"name", "resources": "{cluster='C'}/nodes=N,walltime=W",
   "types": ["deploy"], "command": "sleep 31536000", "queue"[, "project"]}  -> uid;
2. GET .../jobs/{uid} until "state" is "running" (error/terminated: refused), then its
   "assigned_nodes" (FQDNs);
3. POST {api}/sites/{site}/deployments {"nodes", "environment", "key": the public key}
   -> uid; GET .../deployments/{uid} until "status" is "terminated" (or "error"); every
   node's "result"[node]["state"] must be "OK";
4. GET {api}/sites/{site}/clusters/{cluster}/nodes/{node uid} (reference API) for each
   node: cores = architecture.nb_cores, nic_capacity = the rate of the mounted,
   non-management Ethernet adapter;
5. the inventory (root over SSH with `key`, address = the node's FQDN), written and loaded
   back through the inventory's own validation; the job's uid saved for release:
   DELETE {api}/sites/{site}/jobs/{uid}.

While waiting (steps 2 and 3), a dropped connection or an HTTP 5xx is retried with
backoff, at most POLL_RETRIES in a row; a 4xx ends the wait at once. A deployment
answered without a uid is refused. A failure after the job was submitted deletes the
job before raising. Credentials:
none from a Grid'5000 frontend; from outside, HTTP basic auth from G5K_USER and
G5K_PASSWORD. Nothing here has been run against Grid'5000 (docs/cluster.md says what
is tested and what is not).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from orchestrator.cluster import bounds
from orchestrator.cluster.inventory import matching
from orchestrator.cluster.load import load_inventory
from orchestrator.cluster.providers.base import Provider, Reservation
from orchestrator.spec.types import Name
from xcplab_contract.errors import XcplabError

API = "https://api.grid5000.fr/stable"
_SITE = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_ENV = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_WALLTIME = re.compile(r"^(\d{1,3}):([0-5]\d)(?::([0-5]\d))?$")
_NODE = re.compile(r"^([a-z][a-z0-9]*(?:-[a-z0-9]+)*)-(\d+)(?:\.|$)")
MAX_WALLTIME_S = 168 * 3600
HTTP_TIMEOUT_S = 30.0
# While waiting (up to an hour) for a job or a deployment, a dropped connection or a 5xx
# is retried with backoff (poll_s, doubling, at most POLL_BACKOFF_MAX_S); this many
# failures in a row, or any 4xx, end the wait.
POLL_RETRIES = 5
POLL_BACKOFF_MAX_S = 120.0


class ApiError(XcplabError):
    """A failed API request; `transient` when worth retrying (no answer, or HTTP 5xx)."""

    def __init__(self, message: str, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


def walltime_s(v: str) -> int:
    m = _WALLTIME.match(v)
    if not m:
        raise ValueError(f"{v!r} is not HH:MM or HH:MM:SS")
    return int(m[1]) * 3600 + int(m[2]) * 60 + int(m[3] or 0)


def _walltime(v: str) -> str:
    s = walltime_s(v)
    if not 60 <= s <= MAX_WALLTIME_S:
        raise ValueError(f"{v!r} is outside 00:01..168:00")
    return v


Site = Annotated[str, matching(_SITE, "a Grid'5000 site or cluster name (lower case)")]


class G5kConf(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Literal["g5k"]
    name: Name
    site: Site
    cluster: Site
    nodes: Annotated[int, Field(ge=1, le=bounds.MAX_MACHINES)]
    walltime: Annotated[str, AfterValidator(_walltime)]
    environment: Annotated[str, matching(_ENV, "a kadeploy environment name")]
    key: Annotated[str, Field(min_length=1, max_length=bounds.MAX_PATH_CHARS)]
    mtu: Annotated[int, Field(ge=bounds.MIN_MTU, le=bounds.MAX_MTU)] = 1500
    vxlan_overhead: Literal["underlay", "reduce_mtu"] = "reduce_mtu"
    queue: Annotated[str, matching(_SITE, "an OAR queue name")] = "default"
    project: Annotated[str | None, Field(max_length=64)] = None
    api: Annotated[str, Field(pattern=r"^https?://[^\s]{1,200}$")] = API
    # how long to wait for the job to start / the deployment to end (bounded)
    wait_s: Annotated[float, Field(gt=0, le=86400)] = 3600.0
    deploy_timeout_s: Annotated[float, Field(gt=0, le=7200)] = 1800.0
    poll_s: Annotated[float, Field(gt=0, le=300)] = 10.0


# -- requests, as data (what the documented API expects) --------------------------------
def job_request(c: G5kConf) -> tuple[str, str, dict[str, Any]]:
    body: dict[str, Any] = {
        "name": f"xcplab-{c.name}",
        "resources": f"{{cluster='{c.cluster}'}}/nodes={c.nodes},walltime={c.walltime}",
        "types": ["deploy"],
        # the job only holds the nodes: its command must outlive the walltime
        "command": "sleep 31536000",
        "queue": c.queue}
    if c.project:
        body["project"] = c.project
    return "POST", f"{c.api}/sites/{c.site}/jobs", body


def deployment_request(c: G5kConf, nodes: list[str], public_key: str
                       ) -> tuple[str, str, dict[str, Any]]:
    return "POST", f"{c.api}/sites/{c.site}/deployments", {
        "nodes": sorted(nodes), "environment": c.environment, "key": public_key}


def node_uid(fqdn: str) -> tuple[str, str]:
    """('gros-12', 'gros') from 'gros-12.nancy.grid5000.fr'."""
    m = _NODE.match(fqdn)
    if not m:
        raise XcplabError(f"Grid'5000 returned a node name xcplab cannot read: {fqdn!r}")
    return f"{m[1]}-{m[2]}", m[1]


def machine_entry(c: G5kConf, fqdn: str, desc: dict[str, Any], key: str) -> dict[str, Any]:
    """One inventory machine from a node's reference description."""
    uid, _cluster = node_uid(fqdn)
    cores = int((desc.get("architecture") or {}).get("nb_cores") or 0)
    nics = [n for n in desc.get("network_adapters") or []
            if n.get("mounted") and n.get("interface") == "Ethernet"
            and not n.get("management") and n.get("rate")]
    if cores < 1 or not nics:
        raise XcplabError(f"the reference description of {fqdn} has no "
                          + ("architecture.nb_cores" if cores < 1 else
                             "mounted Ethernet adapter with a rate"))
    return {"name": uid, "address": fqdn, "ssh": {"user": "root", "key": key, "port": 22},
            "cores": cores, "nic_capacity": f"{int(nics[0]['rate'])}bps", "mtu": c.mtu,
            "roles": [c.cluster]}


# -- the API over HTTP ------------------------------------------------------------------
class Api:
    """JSON over HTTP(S) with the standard library; basic auth when credentials given."""

    def __init__(self, user: str | None = None, password: str | None = None,
                 timeout_s: float = HTTP_TIMEOUT_S) -> None:
        self.auth = None if not user else "Basic " + base64.b64encode(
            f"{user}:{password or ''}".encode()).decode()
        self.timeout_s = timeout_s

    @classmethod
    def from_env(cls) -> Api:
        return cls(os.environ.get("G5K_USER"), os.environ.get("G5K_PASSWORD"))

    def __call__(self, method: str, url: str, body: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Accept": "application/json",
                                              "Content-Type": "application/json"})
        if self.auth:
            req.add_header("Authorization", self.auth)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as r:
                text = r.read(16 << 20).decode()
        except urllib.error.HTTPError as e:
            detail = e.read(2000).decode(errors="replace").strip()
            raise ApiError(f"Grid'5000 API: {method} {url}: HTTP {e.code}: "
                           f"{detail or e.reason}", transient=e.code >= 500) from e
        except (urllib.error.URLError, OSError) as e:  # no answer: refused, reset, timeout
            raise ApiError(f"Grid'5000 API: {method} {url}: {e}", transient=True) from e
        except UnicodeDecodeError as e:
            raise ApiError(f"Grid'5000 API: {method} {url}: {e}") from e
        if not text.strip():
            return {}
        try:  # a proxy's or login page's HTML, or an answer cut at 16 MiB, is no answer
            doc = json.loads(text)
        except ValueError as e:
            raise XcplabError(f"Grid'5000 API: {method} {url}: not JSON ({e}): "
                              f"{text[:200]!r}") from e
        if not isinstance(doc, dict):
            raise XcplabError(f"Grid'5000 API: {method} {url}: a JSON object expected, "
                              f"got {type(doc).__name__}")
        return doc


class G5kProvider(Provider):
    name = "g5k"
    Conf = G5kConf

    def __init__(self, conf: G5kConf, file: str, base: Path,
                 api: Callable[..., Any] | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 now: Callable[[], float] = time.monotonic) -> None:
        super().__init__(conf, file, base)
        self.api = api or Api.from_env()
        self.sleep = sleep
        self.now = now

    def _key(self) -> tuple[str, str]:
        key = Path(os.path.expanduser(self.conf.key))
        key = key if key.is_absolute() else (self.base / key).resolve()
        pub = key.with_name(key.name + ".pub")
        try:
            public = pub.read_text().strip()
        except OSError as e:
            raise XcplabError(f"{self.file}: key: cannot read the public key {pub}: "
                              f"{e.strerror}") from e
        if not key.is_file() or not public:
            raise XcplabError(f"{self.file}: key: {key} and its non-empty {pub.name} "
                              "must both exist")
        return str(key), public

    def _poll(self, url: str, field: str, done: set[str], failed: set[str],
              limit_s: float, what: str) -> dict[str, Any]:
        t0 = self.now()
        failures = 0
        while True:
            try:
                doc = self.api("GET", url)
            except ApiError as e:
                failures += 1
                if not e.transient:
                    raise
                if failures >= POLL_RETRIES:
                    raise XcplabError(f"Grid'5000: waiting for {what}: {failures} requests "
                                      f"in a row failed, the last: {e}") from e
                if self.now() - t0 > limit_s:
                    raise XcplabError(f"Grid'5000: {what} not reached after {limit_s:g} s; "
                                      f"the last request failed: {e}") from e
                self.sleep(min(self.conf.poll_s * 2 ** failures, POLL_BACKOFF_MAX_S))
                continue
            failures = 0
            state = str(doc.get(field))
            if state in done:
                return dict(doc)
            if state in failed:
                raise XcplabError(f"Grid'5000: {what} is {state}: {url}")
            if self.now() - t0 > limit_s:
                raise XcplabError(f"Grid'5000: {what} still {state} after {limit_s:g} s")
            self.sleep(self.conf.poll_s)

    def acquire(self, out_dir: Path) -> Reservation:
        c = self.conf
        key, public = self._key()
        method, url, body = job_request(c)
        job = self.api(method, url, body)
        uid = job.get("uid")
        if uid is None:
            raise XcplabError(f"Grid'5000: the job submission answered no uid: {job}")
        res = Reservation(self.name, str(out_dir / "inventory.yaml"),
                          {"site": c.site, "job": uid, "api": c.api})
        res.save(out_dir)  # before waiting: an interrupted acquire can still be released
        try:
            running = self._poll(f"{url}/{uid}", "state", {"running"},
                                 {"error", "terminated"}, c.wait_s, f"job {uid}")
            nodes = sorted(running.get("assigned_nodes") or [])
            if len(nodes) != c.nodes:
                raise XcplabError(f"Grid'5000: job {uid} runs on {len(nodes)} nodes, "
                                  f"{c.nodes} were asked for")
            method, durl, dbody = deployment_request(c, nodes, public)
            dep = self.api(method, durl, dbody)
            dep_uid = dep.get("uid")
            if dep_uid is None or str(dep_uid).strip() == "":
                raise XcplabError(f"Grid'5000: the deployment request answered no uid: "
                                  f"{str(dep)[:300]}")
            ended = self._poll(f"{durl}/{dep_uid}", "status", {"terminated"},
                               {"error", "canceled"}, c.deploy_timeout_s,
                               f"deployment {dep_uid}")
            result = ended.get("result") or {}
            ko = [n for n in nodes if (result.get(n) or {}).get("state") != "OK"]
            if ko:
                raise XcplabError(f"Grid'5000: deployment of {c.environment} failed on "
                                  f"{', '.join(ko)}")
            machines = []
            for fqdn in nodes:
                uid_n, cluster = node_uid(fqdn)
                desc = self.api("GET", f"{c.api}/sites/{c.site}/clusters/{cluster}/nodes/"
                                       f"{uid_n}")
                machines.append(machine_entry(c, fqdn, desc, key))
            path = write_inventory(out_dir, {"name": c.name, "vxlan_overhead": c.vxlan_overhead,
                                             "machines": machines})
            res.record["nodes"] = nodes
            res.save(out_dir)
            return Reservation(res.provider, str(path), res.record)
        except BaseException:
            with contextlib.suppress(XcplabError):  # the first error is the one to report
                self.release(res)
            raise

    def release(self, reservation: Reservation) -> None:
        r = reservation.record
        try:
            self.api("DELETE", f"{r['api']}/sites/{r['site']}/jobs/{r['job']}")
        except XcplabError as e:
            if "HTTP 404" not in str(e):  # already gone: released
                raise


def write_inventory(out_dir: Path, data: dict[str, Any]) -> Path:
    """The inventory as YAML (JSON is YAML), loaded back through its validation."""
    path = out_dir / "inventory.yaml"
    path.write_text(json.dumps(data, indent=2) + "\n")
    load_inventory(path)
    return path

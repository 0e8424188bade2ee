"""The provider seam (orchestrator/cluster/providers): a provider file becomes an
inventory, whatever the provider.

- static: the inventory handed on after its own validation (the runs across the
  namespace cluster acquire theirs through it: clusterrun.jumbo_inventory);
- g5k: what can be checked without Grid'5000. The requests, as data, against the shapes
  the Grid'5000 API documents (jobs, deployments, reference nodes) and EnOSlib sends;
  then acquire and release over real HTTP against a loopback server that answers with
  those documented shapes — the provider's own code end to end (requests, polling,
  inventory, release on failure), Grid'5000 itself untested (docs/cluster.md).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from orchestrator.cluster.load import load_inventory
from orchestrator.cluster.providers import Reservation, load_provider, release
from orchestrator.cluster.providers.g5k import (
    POLL_RETRIES,
    Api,
    G5kConf,
    G5kProvider,
    deployment_request,
    job_request,
    machine_entry,
    node_uid,
)
from xcplab_contract.errors import SpecError, XcplabError

ROOT = Path(__file__).resolve().parents[2]


def _g5k_file(tmp_path: Path, **over: Any) -> Path:
    (tmp_path / "id").write_text("private\n")
    (tmp_path / "id.pub").write_text("ssh-ed25519 AAAA me@lab\n")
    fields = {"provider": "g5k", "name": "g5k-xcp", "site": "nancy", "cluster": "gros",
              "nodes": 3, "walltime": "01:30:00", "environment": "debian12-min",
              "key": "id", "poll_s": 0.01, **over}
    path = tmp_path / "g5k.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in fields.items()))
    return path


# -- static ---------------------------------------------------------------------------
def test_static_hands_on_a_valid_inventory_and_names_an_invalid_one(tmp_path: Path) -> None:
    (tmp_path / "k").write_text("key\n")
    inv = tmp_path / "lab.yaml"
    inv.write_text("name: lab\nmachines:\n  - {name: m1, address: 10.0.0.1, ssh: {key: k}, "
                   "cores: 4, nic_capacity: 10Gbps}\n")
    (tmp_path / "static.yaml").write_text("provider: static\ninventory: lab.yaml\n")
    prov = load_provider(tmp_path / "static.yaml")
    res = prov.acquire(tmp_path)
    assert res == Reservation("static", str(inv.resolve()))
    assert load_inventory(res.inventory).machines[0].cores == 4
    prov.release(res)  # nothing to give back
    inv.write_text(inv.read_text().replace("cores: 4", "cores: 0"))
    with pytest.raises(SpecError) as e:
        prov.acquire(tmp_path)
    assert "lab.yaml:3: machines[0].cores" in str(e.value)


def test_a_provider_file_is_validated_like_a_spec(tmp_path: Path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("provider: openstack\n")
    with pytest.raises(SpecError) as e:
        load_provider(bad)
    assert "p.yaml:1: provider: 'openstack' is not a provider: one of g5k, static" in str(e.value)
    with pytest.raises(SpecError) as e:
        load_provider(_g5k_file(tmp_path, nodes=65, walltime="200:00", colour="red"))
    text = str(e.value)
    assert "g5k.yaml:5: nodes" in text and "g5k.yaml:6: walltime" in text, text
    assert "colour" in text


# -- g5k: the requests, against the documented shapes -----------------------------------
def test_g5k_requests_have_the_documented_shape(tmp_path: Path) -> None:
    c = G5kConf.model_validate({"provider": "g5k", "name": "x", "site": "nancy",
                                "cluster": "gros", "nodes": 3, "walltime": "01:30",
                                "environment": "debian12-min", "key": "id"})
    method, url, body = job_request(c)
    # POST /sites/{site}/jobs with OAR's resource string, the deploy type, a command
    # that holds the nodes (as EnOSlib submits: name, types, resources, command, queue)
    assert (method, url) == ("POST", "https://api.grid5000.fr/stable/sites/nancy/jobs")
    assert body == {"name": "xcplab-x", "resources": "{cluster='gros'}/nodes=3,walltime=01:30",
                    "types": ["deploy"], "command": "sleep 31536000", "queue": "default"}
    assert "project" in job_request(c.model_copy(update={"project": "p"}))[2]
    method, url, body = deployment_request(c, ["b.nancy.grid5000.fr", "a.nancy.grid5000.fr"],
                                           "ssh-ed25519 AAAA")
    assert (method, url) == ("POST", "https://api.grid5000.fr/stable/sites/nancy/deployments")
    assert body == {"nodes": ["a.nancy.grid5000.fr", "b.nancy.grid5000.fr"],
                    "environment": "debian12-min", "key": "ssh-ed25519 AAAA"}
    assert node_uid("gros-12.nancy.grid5000.fr") == ("gros-12", "gros")
    assert node_uid("grisou-3.nancy.grid5000.fr") == ("grisou-3", "grisou")
    with pytest.raises(XcplabError):
        node_uid("../etc")
    # a reference description (architecture, network_adapters) -> an inventory machine
    desc = {"architecture": {"nb_cores": 18, "nb_threads": 36},
            "network_adapters": [
                {"device": "eno1", "interface": "Ethernet", "mounted": False, "rate": 1e9,
                 "management": False},
                {"device": "bmc", "interface": "Ethernet", "mounted": True, "rate": 1e8,
                 "management": True},
                {"device": "eno2", "interface": "Ethernet", "mounted": True,
                 "rate": 25000000000, "management": False}]}
    m = machine_entry(c, "gros-12.nancy.grid5000.fr", desc, "/k")
    assert m == {"name": "gros-12", "address": "gros-12.nancy.grid5000.fr",
                 "ssh": {"user": "root", "key": "/k", "port": 22}, "cores": 18,
                 "nic_capacity": "25000000000bps", "mtu": 1500, "roles": ["gros"]}
    with pytest.raises(XcplabError, match="mounted Ethernet"):
        machine_entry(c, "gros-1.nancy.grid5000.fr", {"architecture": {"nb_cores": 2}}, "/k")


# -- g5k over HTTP: a loopback server answering with the documented shapes --------------
class _Fake5k:
    """Answers as the Grid'5000 API documents (a stand-in for Grid'5000, which CI
    cannot reach; the provider's code is the real one)."""

    def __init__(self, deploy_ok: bool = True) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.polls = 0
        self.deploy_ok = deploy_ok
        self.nodes = [f"gros-{i}.nancy.grid5000.fr" for i in (4, 7, 12)]
        # what the next polls of the job answer before the documented shape: an HTTP
        # status, or 0 for a connection closed without an answer
        self.flaky: list[int] = []
        self.deployment: dict[str, Any] = {"uid": "D-1", "status": "processing"}

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        self.calls.append((method, path, body))
        if (method, path) == ("POST", "/stable/sites/nancy/jobs"):
            return 201, {"uid": 1234, "state": "waiting"}
        if (method, path) == ("GET", "/stable/sites/nancy/jobs/1234"):
            if self.flaky:
                code = self.flaky.pop(0)
                return code, {"code": code, "message": "Service Unavailable"}
            self.polls += 1
            return 200, {"uid": 1234, "state": "running" if self.polls > 2 else "waiting",
                         "assigned_nodes": self.nodes}
        if (method, path) == ("POST", "/stable/sites/nancy/deployments"):
            return 201, self.deployment
        if (method, path) == ("GET", "/stable/sites/nancy/deployments/D-1"):
            return 200, {"uid": "D-1", "status": "terminated", "result": {
                n: {"state": "OK" if self.deploy_ok or n != self.nodes[1] else "KO"}
                for n in self.nodes}}
        if method == "GET" and path.startswith("/stable/sites/nancy/clusters/gros/nodes/"):
            return 200, {"uid": path.rsplit("/", 1)[1], "architecture": {"nb_cores": 18},
                         "network_adapters": [{"device": "eno1", "interface": "Ethernet",
                                               "mounted": True, "management": False,
                                               "rate": 10000000000}]}
        if (method, path) == ("DELETE", "/stable/sites/nancy/jobs/1234"):
            return 202, {}
        if path == "/stable/login":  # what a proxy or a login page answers: not JSON
            return 200, b"<html>sign in</html>"
        if path == "/stable/list":
            return 200, [1, 2]
        return 404, {"message": f"no {method} {path}"}


@pytest.fixture
def fake5k() -> Iterator[tuple[_Fake5k, str]]:
    fake = _Fake5k()

    class Handler(BaseHTTPRequestHandler):
        def _do(self) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n)) if n else None
            assert self.headers["Authorization"] == "Basic dTpw"  # u:p
            code, doc = fake.answer(self.command, self.path, body)
            if code == 0:  # the connection closed without an answer
                self.close_connection = True
                return
            data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = _do

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    t.start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_address[1]}/stable"
    finally:
        server.shutdown()
        server.server_close()


def _provider(tmp_path: Path, api_url: str, monkeypatch: pytest.MonkeyPatch) -> G5kProvider:
    monkeypatch.setenv("G5K_USER", "u")  # from outside Grid'5000: basic auth from these
    monkeypatch.setenv("G5K_PASSWORD", "p")
    prov = load_provider(_g5k_file(tmp_path, api=api_url))
    assert isinstance(prov, G5kProvider)
    return prov


def test_g5k_acquire_reserves_deploys_and_writes_an_inventory(
        tmp_path: Path, fake5k: tuple[_Fake5k, str], monkeypatch: pytest.MonkeyPatch) -> None:
    fake, url = fake5k
    out = tmp_path / "out"
    out.mkdir()
    res = _provider(tmp_path, url, monkeypatch).acquire(out)
    inv = load_inventory(res.inventory)  # what the rest of xcplab takes
    assert [m.name for m in inv.machines] == ["gros-12", "gros-4", "gros-7"]
    assert {(m.cores, m.nic_capacity, m.mtu, m.ssh.user) for m in inv.machines} == \
        {(18, 10**10, 1500, "root")}
    assert inv.vxlan_overhead == "reduce_mtu" and inv.machines[0].ssh.key == str(tmp_path / "id")
    assert [c[:2] for c in fake.calls[:5]] == [
        ("POST", "/stable/sites/nancy/jobs"), ("GET", "/stable/sites/nancy/jobs/1234"),
        ("GET", "/stable/sites/nancy/jobs/1234"), ("GET", "/stable/sites/nancy/jobs/1234"),
        ("POST", "/stable/sites/nancy/deployments")]
    assert fake.calls[0][2]["resources"] == "{cluster='gros'}/nodes=3,walltime=01:30:00"
    assert fake.calls[4][2] == {"nodes": sorted(fake.nodes), "environment": "debian12-min",
                                "key": "ssh-ed25519 AAAA me@lab"}
    assert not any(c[0] == "DELETE" for c in fake.calls)  # the nodes stay reserved
    saved = Reservation.load(out)
    assert saved.record["job"] == 1234 and saved.record["nodes"] == sorted(fake.nodes)
    release(out, tmp_path / "g5k.yaml")  # the CLI's path: provider file + saved record
    assert fake.calls[-1][:2] == ("DELETE", "/stable/sites/nancy/jobs/1234")


def test_g5k_a_failed_deployment_releases_the_job(
        tmp_path: Path, fake5k: tuple[_Fake5k, str], monkeypatch: pytest.MonkeyPatch) -> None:
    fake, url = fake5k
    fake.deploy_ok = False
    with pytest.raises(XcplabError, match="failed on gros-7.nancy.grid5000.fr"):
        _provider(tmp_path, url, monkeypatch).acquire(tmp_path)
    assert fake.calls[-1][:2] == ("DELETE", "/stable/sites/nancy/jobs/1234")
    # an API error names the method, URL and status
    with pytest.raises(XcplabError, match=r"GET .*/nowhere: HTTP 404"):
        Api("u", "p")("GET", url + "/nowhere")
    # an answer that is not a JSON object is an error naming the request, not a traceback
    with pytest.raises(XcplabError, match=r"GET .*/login: not JSON .*sign in"):
        Api("u", "p")("GET", url + "/login")
    with pytest.raises(XcplabError, match=r"GET .*/list: a JSON object expected, got list"):
        Api("u", "p")("GET", url + "/list")


def test_g5k_a_brief_api_failure_while_waiting_is_retried(
        tmp_path: Path, fake5k: tuple[_Fake5k, str], monkeypatch: pytest.MonkeyPatch) -> None:
    fake, url = fake5k
    fake.flaky = [503, 0, 502]  # a 5xx, a dropped connection, a 5xx: then the job runs
    out = tmp_path / "out"
    out.mkdir()
    res = _provider(tmp_path, url, monkeypatch).acquire(out)
    assert len(load_inventory(res.inventory).machines) == 3
    polls = [c for c in fake.calls if c[:2] == ("GET", "/stable/sites/nancy/jobs/1234")]
    assert len(polls) == 3 + 3 and not fake.flaky
    assert not any(c[0] == "DELETE" for c in fake.calls)


def test_g5k_persistent_or_client_api_failures_end_the_wait(
        tmp_path: Path, fake5k: tuple[_Fake5k, str], monkeypatch: pytest.MonkeyPatch) -> None:
    fake, url = fake5k
    fake.flaky = [503] * (POLL_RETRIES + 3)  # failing for good: a bounded number of tries
    with pytest.raises(XcplabError, match=rf"waiting for job 1234: {POLL_RETRIES} requests "
                                          r"in a row failed, the last: .*HTTP 503"):
        _provider(tmp_path, url, monkeypatch).acquire(tmp_path)
    assert len(fake.flaky) == 3
    assert fake.calls[-1][:2] == ("DELETE", "/stable/sites/nancy/jobs/1234")
    fake.calls.clear()
    fake.flaky = [403]  # a client error is no passing trouble: not retried
    with pytest.raises(XcplabError, match=r"GET .*/jobs/1234: HTTP 403"):
        _provider(tmp_path, url, monkeypatch).acquire(tmp_path)
    assert [c[:2] for c in fake.calls] == [
        ("POST", "/stable/sites/nancy/jobs"), ("GET", "/stable/sites/nancy/jobs/1234"),
        ("DELETE", "/stable/sites/nancy/jobs/1234")]


def test_g5k_a_deployment_without_uid_is_refused(
        tmp_path: Path, fake5k: tuple[_Fake5k, str], monkeypatch: pytest.MonkeyPatch) -> None:
    fake, url = fake5k
    fake.deployment = {"status": "processing"}
    with pytest.raises(XcplabError, match="the deployment request answered no uid"):
        _provider(tmp_path, url, monkeypatch).acquire(tmp_path)
    assert not any("/deployments/" in c[1] for c in fake.calls)  # never polled .../None
    assert fake.calls[-1][:2] == ("DELETE", "/stable/sites/nancy/jobs/1234")

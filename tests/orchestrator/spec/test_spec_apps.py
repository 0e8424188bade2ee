"""`app:` flows (orchestrator/spec/apps.py): a command pair over the XCP socket stack.
Placeholders filled by the planner, the interposer's environment, and every bad value
refused with FILE:LINE: path: reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec, load_spec_text
from orchestrator.spec.bounds import MAX_APP_COMMAND_CHARS
from xcplab_contract.errors import SpecError
from xcplab_contract.plan import Plan

REPO = Path(__file__).resolve().parents[3]

BASE = """\
name: app
duration: 5s
nodes:
  c: {role: host}
  r: {role: router, queue: xcp}
  s: {role: host}
links:
  - {a: c, b: r, capacity: 10Mbps, delay: 5ms}
  - {a: r, b: s, capacity: 10Mbps, delay: 5ms}
flows:
  - id: web
    src: c
    dst: s
"""
GOOD = BASE + """\
    rate: 5Mbps
    app:
      server: "python3 -m http.server {port} --bind {dst}"
      client: "curl -o /dev/null -w '%{{http_code}}' http://{dst}:{port}/ --interface {src}"
"""


def problems(text: str) -> list[str]:
    with pytest.raises(SpecError) as e:
        load_spec_text(text, "t.yaml")
    return [str(p) for p in e.value.problems]


def test_the_planner_fills_the_placeholders_and_the_interposer_environment():
    plan = make_plan(load_spec_text(GOOD, "t.yaml"), "run-app")
    f = plan.flow("web")
    assert f.tool == "app" and f.port == 5201 and f.parallel == 1 and f.size_bytes is None
    assert f.server_argv == ("python3", "-m", "http.server", "5201", "--bind", f.dst_addr)
    assert f.client_argv == ("curl", "-o", "/dev/null", "-w", "%{http_code}",
                             f"http://{f.dst_addr}:5201/", "--interface", f.src_addr)
    assert f.server_env == {"XCP_SOCKET_PORTS": "5201", "XCP_SOCKET_CC": "xcp"}
    assert f.client_env == {"XCP_SOCKET_PORTS": "5201", "XCP_SOCKET_CC": "xcp",
                            "XCP_SOCKET_NETS": f.dst_addr, "XCP_SOCKET_RATE_BPS": "5000000"}
    assert Plan.from_json(plan.to_json()) == plan  # plan.json keeps it all


def test_a_literal_port_with_port_set_and_the_controller_from_proto():
    text = BASE + """\
    proto: newreno
    port: 8080
    app: {server: "python3 -m http.server 8080", client: "curl http://{dst}:8080/"}
"""
    f = make_plan(load_spec_text(text, "t.yaml"), "run-app").flow("web")
    assert f.port == 8080 and f.server_env["XCP_SOCKET_CC"] == "newreno"
    assert f.client_argv == ("curl", f"http://{f.dst_addr}:8080/")


def test_the_example_validates():
    r = load_spec(REPO / "experiments" / "apps" / "http-over-xcp.yaml")
    assert [f.tool for f in r.flows] == ["app"]


def app(server: str, client: str, extra: str = "") -> str:
    """BASE with one app flow (`extra`: lines of other flow keys before app:)."""
    return BASE + extra + f"    app: {{server: {server}, client: {client}}}\n"


OK_SERVER, OK_CLIENT = '"srv {port}"', '"curl {dst}"'


@pytest.mark.parametrize(("text", "where", "words"), [
    (app(OK_SERVER, '"curl http://{dts}/"'),
     "flows[0].app.client", "unknown placeholder {dts}; valid: {src}, {dst}, {port}"),
    (app(OK_SERVER, '"curl http://10.0.0.1/"'), "flows[0].app.client", "write {dst}"),
    (app('"srv 8080"', '"curl {dst}:8080"'),
     "flows[0].app", "which port does the server listen on?"),
    (app('"srv {port"', OK_CLIENT), "flows[0].app.server", "literal braces"),
    (app('"srv {port!r}"', OK_CLIENT), "flows[0].app.server", "no format or conversion"),
    (app("\"srv 'a {port}\"", OK_CLIENT), "flows[0].app.server", "quotes must be closed"),
    (app('"   "', OK_CLIENT), "flows[0].app.server", "no command"),
    (app('"' + "x" * MAX_APP_COMMAND_CHARS + ' {port}"', OK_CLIENT),
     "flows[0].app.server", f"at most {MAX_APP_COMMAND_CHARS}"),
    (app(OK_SERVER, OK_CLIENT, "    proto: tcp\n"),
     "flows[0].proto", "proto xcp, newreno or hstcp, not tcp"),
    (app(OK_SERVER, OK_CLIENT, "    size: 1MB\n"), "flows[0].size", "ends when its client exits"),
    (app(OK_SERVER, OK_CLIENT, "    parallel: 2\n"), "flows[0].parallel", "remove parallel"),
    (app(OK_SERVER, OK_CLIENT, "    delayed_ack: false\n"),
     "flows[0].delayed_ack", "xcpperf option"),
    (app(OK_SERVER, OK_CLIENT, "    objects: [{at: 0s, size: 1KB}]\n"),
     "flows[0].objects", "either app or objects"),
    (app(OK_SERVER, OK_CLIENT).replace("{server:", "{sever: x, server:"),
     "flows[0].app.sever", "unknown key"),
])
def test_bad_app_flows_are_refused_naming_the_field(text: str, where: str, words: str):
    got = problems(text)
    assert any(re.match(rf"t\.yaml:\d+: {re.escape(where)}: ", p) and words in p
               for p in got), got


def test_recovery_from_defaults_is_refused_naming_defaults():
    text = BASE.replace("flows:", "defaults:\n  flow: {recovery: reno}\nflows:") + \
        '    app: {server: "srv {port}", client: "curl {dst}"}\n'
    got = problems(text)
    assert any("flows[0]:" in p and "(from defaults.flow.recovery)" in p for p in got), got

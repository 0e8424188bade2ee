"""`app:` flows: a command pair run unmodified over the XCP socket stack.

    flows:
      - id: web
        src: h1                   # runs the client
        dst: h2                   # runs the server
        port: 8080                # the server's port (or write {port} in the commands)
        app: {server: "python3 -m http.server {port} --bind {dst}",
              client: "curl -sS -o /dev/null http://{dst}:{port}/"}

The agent starts xcp-stackd on both hosts, the server (before t = 0, waiting until it
listens), then the client at the flow's start, both with the LD_PRELOAD interposer and
XCP_SOCKET_PORTS={port} so their TCP sockets on that port become XCP connections of the
flow's controller (proto). Commands are split like a shell would split words
(shlex: quotes, no pipes or redirections; write `sh -c '...'` for those) after the
placeholders {src}, {dst} (the hosts' addresses on the flow's path) and {port} are
filled in; `{{` and `}}` are literal braces. docs/socket-stack.md, docs/spec.md.
"""

from __future__ import annotations

import shlex
import string
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.spec import bounds

PLACEHOLDERS = ("src", "dst", "port")
APP_PROTOS = ("xcp", "newreno", "hstcp")
# Values that stand in for the placeholders while a template is checked: the longest
# an address or a port can be, so the length bound holds for every plan.
_WIDEST = {"src": "255.255.255.255", "dst": "255.255.255.255", "port": "65535"}


class AppSpec(BaseModel):
    """`app:` of a flow: the server runs on dst, the client on src."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    server: str = Field(min_length=1)
    client: str = Field(min_length=1)


class RApp(BaseModel):
    """The command pair as written (placeholders unfilled: the planner fills them)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    server: str
    client: str


def fields_of(template: str) -> list[str]:
    """Placeholder names in `template`; ValueError for unbalanced braces."""
    out = []
    for _lit, name, spec, conv in string.Formatter().parse(template):
        if name is None:
            continue
        if spec or conv:
            raise ValueError(f"{{{name}...}}: placeholders take no format or conversion")
        out.append(name)
    return out


def expand(template: str, values: dict[str, Any]) -> tuple[str, ...]:
    """The argv of `template` with its placeholders filled (checked templates only)."""
    return tuple(shlex.split(template.format(**values)))


def check_command(template: str) -> tuple[list[str], str | None]:
    """(placeholders used, the problem or None) of one command as written."""
    try:
        names = fields_of(template)
    except ValueError as e:
        return [], (f"{e}; a placeholder is one of "
                    f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)}; write {{{{ and }}}} "
                    "for literal braces")
    unknown = sorted({n for n in names if n not in PLACEHOLDERS})
    if unknown:
        return names, (f"unknown placeholder {{{unknown[0]}}}; valid: "
                       f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)}")
    text = template.format(**_WIDEST)
    if len(text) > bounds.MAX_APP_COMMAND_CHARS:
        return names, (f"{len(text)} characters; a command has at most "
                       f"{bounds.MAX_APP_COMMAND_CHARS} (orchestrator/spec/bounds.py)")
    try:
        words = shlex.split(text)
    except ValueError as e:
        return names, f"cannot be split into words: {e} (quotes must be closed)"
    if not words:
        return names, "no command: give the program and its arguments"
    if len(words) > bounds.MAX_APP_ARGS:
        return names, (f"{len(words)} words; a command has at most {bounds.MAX_APP_ARGS} "
                       "(orchestrator/spec/bounds.py)")
    return names, None


def resolve_app(bad: Any, f: Any, path: tuple[Any, ...], proto: str, settings: dict[str, Any],
                blame: Any) -> RApp | None:
    """The flow's checked `app:` (None without one); problems go to `bad(path, reason)`.
    `settings`: the flow's effective size, parallel, objects, recovery, delayed_ack,
    rto_backoff and xcp_feedback; `blame(key)`: (where a problem with `key` points, the
    note naming defaults.flow when the value came from there)."""
    if f.app is None:
        return None

    def bad_at(key: str, reason: str) -> None:
        where, origin = blame(key)
        bad(where, reason + origin)

    if proto not in APP_PROTOS:
        bad_at("proto", f"an app flow runs over the XCP socket stack: proto xcp, newreno or "
               f"hstcp, not {proto} (a program on kernel TCP needs no app flow)")
    if settings["size"] is not None:
        bad_at("size", "an app flow ends when its client exits: remove size")
    if settings["parallel"] > 1:
        bad_at("parallel", "an app flow is one command pair: remove parallel (give several "
               "flows, or a client that opens several connections)")
    if settings["objects"] is not None:
        bad((*path, "objects"), "objects are played by xcpperf; an app flow runs its own "
            "commands: give either app or objects")
    for key, default in (("recovery", "sack"), ("delayed_ack", True),
                         ("rto_backoff", "sample"), ("xcp_feedback", "all_acks")):
        if settings[key] != default:
            bad_at(key, f"{key} is an xcpperf option; the socket stack's connections use its "
                   f"default ({str(default).lower()}): remove it from this app flow")
    where = (*path, "app")
    used: dict[str, list[str]] = {}
    checked = True
    for role in ("server", "client"):
        names, problem = check_command(getattr(f.app, role))
        used[role] = names
        if problem is not None:
            bad((*where, role), problem)
            checked = False
        elif role == "client" and "dst" not in names:
            bad((*where, role), "the client must reach the server: write {dst} (the server "
                "host's address on the flow's path) where the command names the server")
    if checked and f.port is None and not any("port" in names for names in used.values()):
        bad(where, "which port does the server listen on? write {port} in the commands "
            "(the flow's port: 5201 + the flow's index unless port: is set) or set port: "
            "to the port the server command listens on")
    return RApp(server=f.app.server, client=f.app.client)

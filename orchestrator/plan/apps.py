"""Command lines and environments of `app:` flows (orchestrator/spec/apps.py).

The placeholders are filled with the flow's addresses and port. The environment is
what the LD_PRELOAD interposer reads (docs/socket-stack.md): the server moves its
listen() on the flow's port to the stack, the client its connect() to the server's
address and port; both with the flow's controller. LD_PRELOAD itself is a path on
the machine that runs the flow, so the agent adds it (a plan holds no local paths).
"""

from __future__ import annotations

from orchestrator.spec.apps import expand
from orchestrator.spec.resolved import RFlow


def app_commands(flow: RFlow, src_addr: str, dst_addr: str
                 ) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, str], dict[str, str]]:
    """(server argv, client argv, server env, client env) of an app flow."""
    assert flow.app is not None
    values = {"src": src_addr, "dst": dst_addr, "port": flow.port}
    common = {"XCP_SOCKET_PORTS": str(flow.port), "XCP_SOCKET_CC": flow.proto}
    client_env = {**common, "XCP_SOCKET_NETS": dst_addr}
    if flow.rate_bps is not None:
        client_env["XCP_SOCKET_RATE_BPS"] = str(flow.rate_bps)
    return (expand(flow.app.server, values), expand(flow.app.client, values), common,
            client_env)

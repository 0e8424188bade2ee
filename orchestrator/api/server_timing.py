"""`Server-Timing: app;dur=MS` on every HTTP response (W3C Server Timing).

The time from the request reaching the app to its response headers going out, in
milliseconds. A client (or `bench/bench_api_live.py`) compares it with the latency it
saw: what the handlers cost versus what was spent waiting (the event loop busy with
other requests, the machine's CPUs busy with the experiment or with the clients).
Pure ASGI, so it adds one clock read and one header, not a request object.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = b"server-timing"


class ServerTiming:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()

        async def timed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                ms = (time.perf_counter() - t0) * 1000.0
                headers = list(message.get("headers", []))
                headers.append((HEADER, f"app;dur={ms:.3f}".encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, timed_send)


def app_ms(header: str | None) -> float | None:
    """The `app` duration (ms) of a Server-Timing header value, None without one."""
    for metric in (header or "").split(","):
        name, _, params = metric.strip().partition(";")
        if name == "app":
            for p in params.split(";"):
                key, _, value = p.strip().partition("=")
                if key == "dur":
                    try:
                        return float(value)
                    except ValueError:
                        return None
    return None

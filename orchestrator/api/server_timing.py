"""`Server-Timing: app;dur=MS` on every HTTP response (W3C Server Timing).

The time from the request reaching the app to its response headers going out, in
milliseconds. A client (or `bench/bench_api_live.py`) compares it with the latency it
saw: what the handlers cost versus what was spent waiting (the event loop busy with
other requests, the machine's CPUs busy with the experiment or with the clients).
Pure ASGI, so it adds one clock read and one header, not a request object.

With the service's `server_timing_clock` setting (XCPLAB_SERVER_TIMING_CLOCK=1) the
header also carries `recv;desc=T` and `sent;desc=T`: CLOCK_MONOTONIC seconds when the
request reached the app and when its headers went out. A client on the same machine
reads them with `server_clock()` and splits its latency: before `recv` the request
waited in the kernel, in the event loop or in the HTTP parser; after `sent`, the answer
waited for the client's own loop or CPU.
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
        state = getattr(scope.get("app"), "state", None)
        recv = time.monotonic() if getattr(state, "server_timing_clock", False) else None

        async def timed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                ms = (time.perf_counter() - t0) * 1000.0
                value = f"app;dur={ms:.3f}"
                if recv is not None:
                    value += f", recv;desc={recv:.6f}, sent;desc={time.monotonic():.6f}"
                headers = list(message.get("headers", []))
                headers.append((HEADER, value.encode()))
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


def server_clock(header: str | None) -> tuple[float, float] | None:
    """(recv, sent): the server's CLOCK_MONOTONIC seconds of a Server-Timing header
    written with `server_timing_clock` on; None without both."""
    stamps: dict[str, float] = {}
    for metric in (header or "").split(","):
        name, _, params = metric.strip().partition(";")
        if name in ("recv", "sent"):
            key, _, value = params.strip().partition("=")
            try:
                if key == "desc":
                    stamps[name] = float(value)
            except ValueError:
                return None
    if "recv" in stamps and "sent" in stamps:
        return stamps["recv"], stamps["sent"]
    return None

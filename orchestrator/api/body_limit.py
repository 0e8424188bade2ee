"""A size limit on every request body, before any route reads or parses it.

Routes that take a spec read it through `deps.spec_body` with the tighter
`max_spec_bytes`; this bounds the others (POST /sweeps parses JSON into a model)
at `max_body_bytes`. A declared Content-Length over the limit is answered 413 at
once; a body streamed without one is read up to the limit, and answered 413 as soon
as it passes it, before the app sees any of it.
"""

from __future__ import annotations

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orchestrator.api.errors import body_of, status_of
from orchestrator.service.errors import TooLarge


class BodyLimit:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        service = getattr(scope["app"].state, "service", None)
        if service is None:  # the lifespan has not built the service (startup)
            await self.app(scope, receive, send)
            return
        limit = service.settings.max_body_bytes
        declared = dict(scope["headers"]).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await _answer(send, TooLarge(size=int(declared), limit=limit, what="request body"))
            return
        # Read the body here, at most `limit` bytes, then hand it to the app as it came;
        # later receive() calls (disconnect) go to the server.
        body: list[Message] = []
        seen = 0
        more = True
        while more:
            message = await receive()
            body.append(message)
            if message["type"] != "http.request":
                break
            seen += len(message.get("body", b""))
            if seen > limit:
                await _answer(send, TooLarge(size=seen, limit=limit, what="request body"))
                return
            more = message.get("more_body", False)

        async def replay() -> Message:
            return body.pop(0) if body else await receive()

        await self.app(scope, replay, send)


async def _answer(send: Send, e: TooLarge) -> None:
    response = JSONResponse(body_of(e), status_code=status_of(e))

    async def no_body() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    await response({"type": "http"}, no_body, send)

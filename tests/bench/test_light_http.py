"""bench/light_http.py, the bench's small HTTP/1.1 client, against a loopback server
that answers with Content-Length, chunked and Connection: close answers."""

from __future__ import annotations

import asyncio

import pytest

from bench.light_http import LightClient


async def _serve(seen: list[tuple[str, bytes]]) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                break
            lines = head.decode().split("\r\n")
            target = lines[0].split(" ")[1]
            length = next((int(v) for k, _, v in (ln.partition(": ") for ln in lines)
                           if k.lower() == "content-length"), 0)
            body = await reader.readexactly(length)
            seen.append((target, body))
            if target.endswith("/chunked"):
                writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
            elif target.endswith("/close"):
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n"
                             b"Connection: close\r\n\r\ngone")
                await writer.drain()
                writer.close()
                return
            else:
                out = b"echo:" + body
                writer.write(b"HTTP/1.1 201 Created\r\nServer-Timing: app;dur=1.5\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(out), out))
            await writer.drain()
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def test_requests_answers_and_reconnects() -> None:
    async def main() -> None:
        seen: list[tuple[str, bytes]] = []
        server = await _serve(seen)
        port = server.sockets[0].getsockname()[1]
        async with LightClient(f"http://127.0.0.1:{port}/api", headers={"X-A": "1"}) as c:
            r = await c.post("/x", content=b"spec", params={"pool": "p q"})
            assert (r.status_code, r.text) == (201, "echo:spec")
            assert r.headers["server-timing"] == "app;dur=1.5"
            r = await c.get("/chunked")
            assert (r.status_code, r.content) == (200, b"hello world")
            r = await c.get("/close")
            assert (r.status_code, r.text) == (404, "gone")
            r = await c.get("/after")  # a new connection: the server closed the last one
            assert r.status_code == 201
        assert [t for t, _ in seen] == ["/api/x?pool=p+q", "/api/chunked", "/api/close",
                                        "/api/after"]
        server.close()
        await server.wait_closed()

    asyncio.run(main())


def test_only_plain_http_urls() -> None:
    with pytest.raises(ValueError, match="only http"):
        LightClient("https://example.org/")

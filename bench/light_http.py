"""A small HTTP/1.1 keep-alive client on asyncio streams, for load generators that
share the machine with what they measure (bench_api_live).

httpx's AsyncClient (httpcore, anyio, h11 under it) spent about as much CPU per request
in the bench's client processes as the server spent answering it: on a 2-core machine
where a run's engines already hold most of a core, the clients' own CPU was taken from
the server and counted in its tail. A real user's browser runs on another machine. This
client does one request at a time per connection: a request line, headers, a body with
Content-Length; it reads a Content-Length or chunked answer. Nothing else (no TLS, no
redirects, no proxies, no compression): enough for loopback benches, not a library.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlencode, urlsplit

# An answer's header block and body are bounded: a bench talking to a broken server
# must fail, not grow without limit.
MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024


class LightResponse:
    def __init__(self, status_code: int, headers: dict[str, str], body: bytes) -> None:
        self.status_code = status_code
        self.headers = headers  # names lower-cased; a repeated header keeps its last value
        self.content = body

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


class LightClient:
    """One keep-alive connection to BASE_URL (http://HOST:PORT/prefix), reopened when
    the server closes it. HEADERS go with every request."""

    def __init__(self, base_url: str, headers: dict[str, str] | None = None,
                 timeout: float = 30.0) -> None:
        u = urlsplit(base_url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError(f"{base_url!r}: only http://HOST:PORT/... URLs")
        self._host, self._port = u.hostname, u.port or 80
        self._prefix = u.path.rstrip("/")
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self._host_line = f"Host: {self._host}:{self._port}\r\n"
        self._timeout = timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> LightClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except OSError:
                pass
        self._reader = self._writer = None

    async def get(self, path: str) -> LightResponse:
        return await self.request("GET", path)

    async def post(self, path: str, *, content: bytes = b"",
                   params: dict[str, str] | None = None,
                   headers: dict[str, str] | None = None) -> LightResponse:
        if params:
            path += ("&" if "?" in path else "?") + urlencode(params)
        return await self.request("POST", path, content, headers)

    async def request(self, method: str, path: str, body: bytes = b"",
                      headers: dict[str, str] | None = None) -> LightResponse:
        return await asyncio.wait_for(self._exchange(method, path, body, headers or {}),
                                      self._timeout)

    async def _exchange(self, method: str, path: str, body: bytes,
                        headers: dict[str, str]) -> LightResponse:
        head = (f"{method} {self._prefix}{path} HTTP/1.1\r\n{self._host_line}{self._fixed}"
                + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
                + (f"Content-Length: {len(body)}\r\n" if body or method == "POST" else "")
                + "\r\n").encode("latin-1")
        for attempt in (1, 2):  # a kept-alive connection the server closed: reopen once
            if self._writer is None:
                self._reader, self._writer = await asyncio.open_connection(
                    self._host, self._port, limit=MAX_HEADER_BYTES)
            assert self._reader is not None and self._writer is not None
            try:
                self._writer.write(head + body)
                await self._writer.drain()
                return await self._read_answer(self._reader)
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.aclose()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _read_answer(self, reader: asyncio.StreamReader) -> LightResponse:
        block = await reader.readuntil(b"\r\n\r\n")
        lines = block.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = bytearray()
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")  # no trailers expected
                    break
                if len(body) + size > MAX_BODY_BYTES:
                    raise ValueError(f"answer body over {MAX_BODY_BYTES} bytes")
                body += await reader.readexactly(size)
                await reader.readexactly(2)
            content = bytes(body)
        else:
            n = int(headers.get("content-length", "0"))
            if n > MAX_BODY_BYTES:
                raise ValueError(f"answer body of {n} bytes, over {MAX_BODY_BYTES}")
            content = await reader.readexactly(n)
        if headers.get("connection", "").lower() == "close":
            await self.aclose()
        return LightResponse(status, headers, content)

"""A TCP relay that delays what the server sends by a fixed time (the slow-machine test's
transport: a machine whose agent answers late, with nothing else changed).

    python3 delayproxy.py LISTEN_ADDR LISTEN_PORT TO_ADDR TO_PORT DELAY_S

Client -> server bytes pass at once; server -> client bytes are held DELAY_S each, in
order. One thread pair per connection; runs until killed (the test starts and ends it by
pid). Prints "ready" once listening.
"""

from __future__ import annotations

import queue
import socket
import sys
import threading
import time


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        _close_write(dst)


def _delayed(src: socket.socket, dst: socket.socket, delay_s: float) -> None:
    held: queue.Queue[tuple[float, bytes]] = queue.Queue()

    def reader() -> None:
        try:
            while data := src.recv(65536):
                held.put((time.monotonic() + delay_s, data))
        except OSError:
            pass
        held.put((time.monotonic() + delay_s, b""))

    threading.Thread(target=reader, daemon=True).start()
    try:
        while True:
            due, data = held.get()
            time.sleep(max(0.0, due - time.monotonic()))
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        _close_write(dst)


def _close_write(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def main() -> int:
    laddr, lport, taddr, tport, delay = sys.argv[1:6]
    srv = socket.create_server((laddr, int(lport)), reuse_port=False)
    print("ready", flush=True)
    while True:
        client, _ = srv.accept()
        server = socket.create_connection((taddr, int(tport)))
        for s in (client, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_pipe, args=(client, server), daemon=True).start()
        threading.Thread(target=_delayed, args=(server, client, float(delay)),
                         daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())

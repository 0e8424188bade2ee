"""Network-namespace primitives without forking: unshare/mount/setns through libc.

`ip netns add` (and pyroute2's `netns.create`) fork one process per namespace.
Here a namespace is made by the calling *thread* (network namespaces are
per-task): unshare(CLONE_NEWNET), bind-mount /proc/thread-self/ns/net onto
/run/netns/NAME so `ip netns` and the engine see it, and setns back. Callers run
these in a dedicated thread (see `ns_thread`) so the rest of the process never
observes a foreign namespace.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000
MS_REC = 16384
MS_BIND = 4096
MS_SHARED = 1 << 20
MNT_DETACH = 2

_libc = ctypes.CDLL(None, use_errno=True)
_T = TypeVar("_T")


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def ns_path(name: str) -> Path:
    return NETNS_DIR / name


def _prepare_rundir() -> None:
    """Make /run/netns a shared mount point, as iproute2 does, so bind mounts propagate."""
    NETNS_DIR.mkdir(parents=True, exist_ok=True)
    d = str(NETNS_DIR).encode()
    if _libc.mount(b"", d, b"none", MS_SHARED | MS_REC, None) == 0:
        return
    _check(_libc.mount(d, d, b"none", MS_BIND | MS_REC, None), f"bind-mount {NETNS_DIR}")
    _check(_libc.mount(b"", d, b"none", MS_SHARED | MS_REC, None), f"share {NETNS_DIR}")


def setns_fd(fd: int) -> None:
    """Move the calling thread into the network namespace `fd`."""
    _check(_libc.setns(fd, CLONE_NEWNET), "setns")


def _bind_as(name: str, source: bytes, before: Callable[[], None] = lambda: None) -> int:
    """Claim /run/netns/NAME (never an existing one), run `before`, bind-mount the
    namespace file `source` onto it; returns an fd to it. On failure the name is freed."""
    path = ns_path(name)
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0))
    except FileExistsError as e:
        raise OSError(errno.EEXIST, f"network namespace {name} already exists") from e
    try:
        before()
        _check(_libc.mount(source, str(path).encode(), b"none", MS_BIND, None),
               f"bind-mount {source.decode()} as namespace {name}")
    except OSError:
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    return os.open(path, os.O_RDONLY | os.O_CLOEXEC)


def create_here(name: str) -> int:
    """Create namespace `name` and LEAVE the calling thread inside it; returns an fd to it.

    The caller is responsible for setns-ing back (ns_thread does it).
    """
    def unshare() -> None:
        _check(_libc.unshare(CLONE_NEWNET), f"unshare for {name}")

    return _bind_as(name, b"/proc/thread-self/ns/net", unshare)


def attach_here(name: str, pid: int) -> int:
    """Name the network namespace of process `pid` (a container's) `name`, as
    `ip netns attach` does, and LEAVE the calling thread inside it; returns an fd to it.
    `remove` later unmounts the name only: the namespace lives as long as its process."""
    fd = _bind_as(name, f"/proc/{pid}/ns/net".encode())
    setns_fd(fd)
    return fd


def remove(name: str) -> bool:
    """Unmount and unlink /run/netns/NAME; True when it existed. Kernel frees it lazily."""
    path = ns_path(name)
    if not path.exists():
        return False
    _libc.umount2(str(path).encode(), MNT_DETACH)  # may be unmounted already
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return True


def list_names(prefix: str) -> list[str]:
    if not NETNS_DIR.is_dir():
        return []
    return sorted(p.name for p in NETNS_DIR.iterdir() if p.name.startswith(prefix))


def write_sysctl(key: str, value: str | int) -> None:
    """Write a sysctl in the calling thread's namespace (/proc/sys/net is per task)."""
    Path("/proc/sys", *key.split(".")).write_text(f"{value}\n")


def ns_thread(fn: Callable[[], _T]) -> _T:
    """Run `fn` in a fresh thread that restores its namespace when done; re-raise errors.

    Namespace switching happens only inside such threads, so the agent's main
    thread (and anything it forks) always stays in the root namespace.
    """
    box: dict[str, object] = {}

    def body() -> None:
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            _prepare_rundir()
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the calling thread
            box["error"] = e
        finally:
            try:
                setns_fd(home)
            finally:
                os.close(home)

    t = threading.Thread(target=body, name="xcplab-netns")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]


@contextlib.contextmanager
def inside(fd: int, home: int) -> Iterator[None]:
    """Within an ns_thread: enter namespace `fd`, return to `home` afterwards."""
    setns_fd(fd)
    try:
        yield
    finally:
        setns_fd(home)

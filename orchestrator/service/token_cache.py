"""Bearer tokens already checked, kept a few seconds (issue 19, the API under load).

Every API request used to look its token and user up in the database through the ORM:
about 0.3 ms of the event loop's CPU per request, a tenth of all the server spent on a
status request. A token checked once is kept here for `ttl_s` seconds, so a user
polling once a second costs one lookup per `ttl_s`, not one per request.

Revocation still takes effect: `xcplab user revoke` writes the database from another
process, which this cache cannot see, so an entry is trusted only until it expires; a
revoked token is refused at most `ttl_s` seconds after the revocation (the service's
`token_cache_s` setting, 0 turns the cache off). Bounded: at most `max_entries`
tokens, the least recently used one leaves first. Keyed by sha256 of the whole token,
so a wrong secret never matches and no token is held in clear.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from orchestrator.service.models import User
from orchestrator.service.users import detached_user


@dataclass(frozen=True)
class _Known:
    expires: float  # monotonic
    user_id: int
    name: str
    admin: bool


class TokenCache:
    def __init__(self, ttl_s: float, max_entries: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries {max_entries}: at least 1")
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._clock = clock
        self._known: OrderedDict[bytes, _Known] = OrderedDict()
        self._lock = threading.Lock()  # pages authenticate in the thread pool too

    def __len__(self) -> int:
        return len(self._known)

    def user(self, token: str, lookup: Callable[[str], User]) -> User:
        """The user of TOKEN: from the cache while its entry is fresh, else LOOKUP(token)
        (which raises for a bad token; nothing is kept then). A fresh detached User per
        call, so no request shares an ORM object with another."""
        if self.ttl_s <= 0:
            return lookup(token)
        key = hashlib.sha256(token.encode()).digest()
        now = self._clock()
        with self._lock:
            known = self._known.get(key)
            if known is not None and known.expires > now:
                self._known.move_to_end(key)
                return _detached(known)
        user = lookup(token)
        known = _Known(now + self.ttl_s, user.id, user.name, bool(user.admin))
        with self._lock:
            self._known[key] = known
            self._known.move_to_end(key)
            while len(self._known) > self.max_entries:
                self._known.popitem(last=False)
        return _detached(known)

    def forget_all(self) -> None:
        with self._lock:
            self._known.clear()


def _detached(known: _Known) -> User:
    return detached_user(known.user_id, known.name, known.admin)

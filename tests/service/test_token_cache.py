"""The API's token cache (orchestrator/service/token_cache.py): a checked token is
trusted for token_cache_s, then looked up again, so a revocation takes effect; the
cache is bounded; a wrong secret never matches a cached token."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from svc_helpers import Api

from orchestrator.service.errors import Unauthorized
from orchestrator.service.models import User
from orchestrator.service.token_cache import TokenCache
from orchestrator.service.users import revoke_tokens


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_an_entry_is_trusted_until_it_expires_then_looked_up_again() -> None:
    clock, calls = Clock(), []
    revoked = False

    def lookup(token: str) -> User:
        calls.append(token)
        if revoked:
            raise Unauthorized("invalid or revoked token")
        return User(id=7, name="erin", admin=False)

    cache = TokenCache(ttl_s=5.0, max_entries=10, clock=clock)
    first = cache.user("xcp_a.s", lookup)
    assert (first.id, first.name, first.admin) == (7, "erin", False)
    clock.t += 4.9
    again = cache.user("xcp_a.s", lookup)
    assert calls == ["xcp_a.s"] and again.id == 7 and again is not first
    revoked = True
    clock.t += 0.2  # 5.1 s after the check: expired, looked up again, refused
    with pytest.raises(Unauthorized):
        cache.user("xcp_a.s", lookup)
    with pytest.raises(Unauthorized):  # a refusal is not cached: asked every time
        cache.user("xcp_a.s", lookup)
    assert len(calls) == 3


def test_a_wrong_secret_is_looked_up_not_served_from_the_cache() -> None:
    seen: list[str] = []

    def lookup(token: str) -> User:
        seen.append(token)
        if token != "xcp_a.right":
            raise Unauthorized("invalid or revoked token")
        return User(id=1, name="a", admin=False)

    cache = TokenCache(ttl_s=60.0, max_entries=10)
    cache.user("xcp_a.right", lookup)
    with pytest.raises(Unauthorized):
        cache.user("xcp_a.wrong", lookup)
    assert seen == ["xcp_a.right", "xcp_a.wrong"]


def test_the_cache_is_bounded_least_recently_used_first_out() -> None:
    calls: list[str] = []

    def lookup(token: str) -> User:
        calls.append(token)
        return User(id=len(calls), name=token[4:], admin=False)

    cache = TokenCache(ttl_s=60.0, max_entries=3)
    for t in ("xcp_1.s", "xcp_2.s", "xcp_3.s"):
        cache.user(t, lookup)
    cache.user("xcp_1.s", lookup)  # used again: 2 is now the oldest
    cache.user("xcp_4.s", lookup)  # evicts 2
    assert len(cache) == 3
    cache.user("xcp_1.s", lookup)
    cache.user("xcp_2.s", lookup)  # looked up again
    assert calls == ["xcp_1.s", "xcp_2.s", "xcp_3.s", "xcp_4.s", "xcp_2.s"]
    with pytest.raises(ValueError):
        TokenCache(ttl_s=1.0, max_entries=0)


def test_zero_seconds_looks_every_request_up() -> None:
    calls: list[str] = []

    def lookup(token: str) -> User:
        calls.append(token)
        return User(id=1, name="a", admin=False)

    cache = TokenCache(ttl_s=0.0, max_entries=10)
    for _ in range(3):
        cache.user("xcp_a.s", lookup)
    assert len(calls) == 3 and len(cache) == 0


def test_through_the_api_a_revoked_token_is_refused_once_its_entry_expires(
        make_api: Callable[..., Api]) -> None:
    api: Api = make_api(token_cache_s=0.3)
    h = api.h("alice")
    assert api.client.get("/api/v1/experiments", headers=h).status_code == 200
    service = api.client.app.state.service
    assert len(service.tokens) == 1  # the API's answers do go through the cache
    with service.sessions() as db:
        assert revoke_tokens(db, "alice") == 1
        db.commit()
    time.sleep(0.35)
    assert api.client.get("/api/v1/experiments", headers=h).status_code == 401
    assert api.client.get("/api/v1/experiments", headers=api.h("bob")).status_code == 200

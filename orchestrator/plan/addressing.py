"""Deterministic addresses and MACs, from the link's position in the spec.

Link k (0-based, chains expanded, spec order) gets subnet 10.<k div 256>.<k mod 256>.0/24;
its `a` end is .1 and its `b` end .2. A /24 per link wastes space but keeps
addresses readable (`10.0.3.2` = link 3, end b) and 65 536 links fit in 10/8.
MACs are locally administered (bit 0x02 of the first octet) and unicast:
02:78:63:<k hi>:<k lo>:<01|02> ("xc" in the 2nd/3rd octet marks xcplab frames
in captures). Namespaces keep experiments apart, so MACs need not differ per run.
"""

from __future__ import annotations

from xcplab_contract.errors import PlanError

MAX_LINKS = 65536


def _check(k: int) -> None:
    if not 0 <= k < MAX_LINKS:
        raise PlanError(f"too many links: {k + 1} (at most {MAX_LINKS} fit in 10.0.0.0/8 "
                        "with one /24 per link)")


def subnet(k: int) -> str:
    _check(k)
    return f"10.{k >> 8}.{k & 0xFF}.0/24"


def address(k: int, end: str) -> str:
    """Bare IPv4 of end 'a' (.1) or 'b' (.2) of link k."""
    _check(k)
    return f"10.{k >> 8}.{k & 0xFF}.{1 if end == 'a' else 2}"


def mac(k: int, end: str) -> str:
    _check(k)
    return f"02:78:63:{k >> 8:02x}:{k & 0xFF:02x}:{1 if end == 'a' else 2:02x}"

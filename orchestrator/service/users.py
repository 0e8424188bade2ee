"""Users and bearer tokens.

A token reads `xcp_<id>.<secret>`: the id is stored in clear to find the row,
the secret (32 random bytes) only as sha256(salt + secret). A secret with 256
bits of entropy needs no slow hash; a fast one keeps every request cheap.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from sqlalchemy import Connection, bindparam, select
from sqlalchemy.orm import Session, make_transient_to_detached

from orchestrator.service.errors import Unauthorized
from orchestrator.service.models import Token, User
from xcplab_contract.errors import XcplabError

TOKEN_PREFIX = "xcp_"


def _digest(salt: str, secret: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + secret.encode()).hexdigest()


def create_user(db: Session, name: str, *, admin: bool = False) -> tuple[User, str]:
    """Creates NAME and its first token; returns the token in clear (shown once)."""
    if not name or len(name) > 64 or not name.replace("-", "").replace("_", "").isalnum():
        raise XcplabError(f"user name {name!r}: use 1-64 letters, digits, '-' or '_'")
    if db.scalar(select(User).where(User.name == name)) is not None:
        raise XcplabError(f"user {name!r} already exists")
    user = User(name=name, admin=admin)
    db.add(user)
    db.flush()
    token = issue_token(db, user)
    return user, token


def issue_token(db: Session, user: User) -> str:
    token_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    db.add(Token(id=token_id, user_id=user.id, salt=salt, digest=_digest(salt, secret)))
    return f"{TOKEN_PREFIX}{token_id}.{secret}"


_BAD_TOKEN = "invalid or revoked token"  # the same whatever was wrong


def _token_parts(token: str) -> tuple[str, str]:
    """(token id, secret) of a token as issue_token writes it, or Unauthorized."""
    if not token.startswith(TOKEN_PREFIX) or "." not in token:
        raise Unauthorized(_BAD_TOKEN)
    token_id, _, secret = token[len(TOKEN_PREFIX):].partition(".")
    return token_id, secret


def _check_token(row: Any, secret: str) -> None:
    """Unauthorized unless ROW (a Token, or a row with its salt, digest and revoked) is
    there, not revoked, and holds SECRET's digest."""
    if row is None or row.revoked or not hmac.compare_digest(row.digest,
                                                             _digest(row.salt, secret)):
        raise Unauthorized(_BAD_TOKEN)


def authenticate(db: Session, token: str) -> User:
    """The user owning TOKEN, or Unauthorized (same message whatever was wrong)."""
    token_id, secret = _token_parts(token)
    # One query for the token and its user (the relationship would lazy-load a second).
    found = db.execute(select(Token, User).join(User, Token.user_id == User.id)
                       .where(Token.id == token_id)).first()
    _check_token(found[0] if found is not None else None, secret)
    assert found is not None
    return found[1]


_T = Token.__table__
_U = User.__table__
# Built once (building a statement costs more than running it on SQLite).
_TOKEN_USER = (select(_T.c.salt, _T.c.digest, _T.c.revoked, _U.c.id, _U.c.name, _U.c.admin)
               .join_from(_T, _U, _T.c.user_id == _U.c.id)
               .where(_T.c.id == bindparam("token_id")))


def authenticate_conn(conn: Connection, token: str) -> User:
    """`authenticate` as one Core query on a bare connection (no session, no ORM load):
    the API's per-request check, about a fifth of the ORM's CPU (issue 19). The User
    is detached, with id, name and admin set."""
    token_id, secret = _token_parts(token)
    row = conn.execute(_TOKEN_USER, {"token_id": token_id}).first()
    _check_token(row, secret)
    assert row is not None
    return detached_user(row.id, row.name, bool(row.admin))


def detached_user(user_id: int, name: str, admin: bool) -> User:
    """A User with id, name and admin set and no session: what a request needs of its
    caller; handlers pass it to their own session by id."""
    user = User(id=user_id, name=name, admin=admin)
    make_transient_to_detached(user)
    return user


def revoke_tokens(db: Session, name: str) -> int:
    user = db.scalar(select(User).where(User.name == name))
    if user is None:
        raise XcplabError(f"user {name!r} does not exist")
    n = 0
    for t in user.tokens:
        if not t.revoked:
            t.revoked = True
            n += 1
    return n


def list_users(db: Session) -> list[User]:
    return list(db.scalars(select(User).order_by(User.name)))

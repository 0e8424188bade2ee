"""Who is looking at a page: the API's bearer token kept in a cookie, and CSRF.

The cookie holds the token `xcplab user add` printed (HttpOnly, SameSite=Strict,
Secure behind https). Every form that changes something carries a CSRF value
derived from that token (HMAC, so it is worthless without the cookie and changes
with it), and a POST whose Origin names another site is refused before anything.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, Request
from fastapi.responses import Response

from orchestrator.api.deps import DB
from orchestrator.service.errors import Unauthorized
from orchestrator.service.models import User
from orchestrator.service.users import authenticate

COOKIE = "xcplab_token"
_CSRF_LABEL = b"xcplab-ui-csrf-v1"


class LoginRequired(Exception):
    """No valid cookie: the page answers with a redirect to the login form."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


class CsrfRefused(Unauthorized):
    """A form without the caller's CSRF value, or posted from another origin."""


def csrf_token(token: str) -> str:
    return hmac.new(token.encode(), _CSRF_LABEL, hashlib.sha256).hexdigest()


def same_origin(request: Request) -> bool:
    """False when the browser says the request comes from another site."""
    origin = request.headers.get("origin") or request.headers.get("referer")
    if origin is None:
        return True  # not a browser, or one that sends neither: the CSRF value decides
    return urlsplit(origin).netloc == request.headers.get("host", "")


def check_csrf(request: Request, token: str, sent: str | None) -> None:
    if not same_origin(request):
        raise CsrfRefused("form posted from another site; reload the page and try again")
    if not sent or not hmac.compare_digest(sent, csrf_token(token)):
        raise CsrfRefused("form expired or forged (CSRF check failed); reload the page")


class PageUser:
    """The user of a page and their token (for the CSRF value of its forms)."""

    def __init__(self, user: User, token: str) -> None:
        self.user = user
        self.token = token

    @property
    def csrf(self) -> str:
        return csrf_token(self.token)


def page_user(request: Request, db: DB) -> PageUser:
    token = request.cookies.get(COOKIE)
    nxt = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if not token:
        raise LoginRequired(nxt)
    try:
        return PageUser(authenticate(db, token), token)
    except Unauthorized:
        raise LoginRequired(nxt) from None


CurrentPageUser = Annotated[PageUser, Depends(page_user)]


def set_login(response: Response, request: Request, token: str) -> None:
    response.set_cookie(COOKIE, token, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/")


def clear_login(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")

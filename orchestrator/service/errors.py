"""Domain errors of the service; the API maps each to one HTTP status in one place."""

from __future__ import annotations

from dataclasses import dataclass

from xcplab_contract.errors import XcplabError


@dataclass
class NotFound(XcplabError):
    """Does not exist, or belongs to someone the caller may not see (same answer)."""

    what: str
    ident: str

    def __str__(self) -> str:
        return f"{self.what} {self.ident!r} not found"


@dataclass
class Unauthorized(XcplabError):
    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass
class Conflict(XcplabError):
    """The request does not fit the object's state (e.g. summary of a queued run)."""

    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass
class TooLarge(XcplabError):
    """The request body exceeds a size limit (HTTP 413)."""

    size: int
    limit: int
    what: str = "spec"

    def __str__(self) -> str:
        return f"{self.what} is {self.size} bytes; the limit is {self.limit} bytes"


@dataclass
class LimitExceeded(XcplabError):
    """A valid spec asks for more than this service allows (HTTP 422)."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class RateLimited(XcplabError):
    retry_after_s: float

    def __str__(self) -> str:
        return f"submission rate limit reached; retry in {self.retry_after_s:.1f} s"


@dataclass
class Busy(XcplabError):
    """The service has as much of this work queued as it takes; retry shortly (HTTP 503)."""

    what: str
    retry_after_s: float

    def __str__(self) -> str:
        return f"{self.what} is busy; retry in {self.retry_after_s:.0f} s"


@dataclass
class BadRequest(XcplabError):
    reason: str

    def __str__(self) -> str:
        return self.reason

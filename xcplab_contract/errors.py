"""One error root for everything xcplab reports to a user.

Subclasses carry the data a user needs to act (file, YAML path, node,
command, exit code); the CLI and the web API render them in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class XcplabError(Exception):
    """Root of every error xcplab raises on purpose."""


# Error messages quote what the user wrote; these bound how much, so a hostile input
# never comes back as a megabyte-long answer.
MAX_PATH_CHARS = 200
MAX_REASON_CHARS = 600
MAX_PROBLEMS = 100


def clip(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


@dataclass
class SpecProblem:
    """One problem in a spec: where it is and what would be valid."""

    file: str
    line: int | None
    path: str  # dotted YAML path, e.g. "links[2].capacity"
    reason: str

    def __post_init__(self) -> None:
        self.file = clip(str(self.file), MAX_PATH_CHARS)
        self.path = clip(str(self.path), MAX_PATH_CHARS)
        self.reason = clip(str(self.reason), MAX_REASON_CHARS)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.path}: {self.reason}"


@dataclass
class SpecError(XcplabError):
    """A spec failed validation; carries every problem found, not only the first."""

    problems: list[SpecProblem] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.problems) > MAX_PROBLEMS:
            more = len(self.problems) - MAX_PROBLEMS
            first = self.problems[0]
            self.problems = [*self.problems[:MAX_PROBLEMS],
                             SpecProblem(first.file, None, "(spec)",
                                         f"{more} more problems not shown")]

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


@dataclass
class PlanError(XcplabError):
    """A valid spec that cannot be realised (no route, address space exhausted...)."""

    reason: str

    def __str__(self) -> str:
        return self.reason


@dataclass
class BackendError(XcplabError):
    """A backend action failed on a node."""

    node: str
    cmd: str
    rc: int | None
    stderr: str

    def __str__(self) -> str:
        rc = "" if self.rc is None else f" (exit {self.rc})"
        return f"{self.node}: `{self.cmd}` failed{rc}: {self.stderr.strip()}"


@dataclass
class RunError(XcplabError):
    """A run could not complete."""

    run: str
    reason: str

    def __str__(self) -> str:
        return f"run {self.run}: {self.reason}"


@dataclass
class OptionError(XcplabError):
    """A backend or agent option that does not exist or has a value it does not take."""

    owner: str  # "netns backend", "agent"
    key: str
    value: object
    valid: str  # the valid values (or, for an unknown key, the valid keys), in words
    known: bool = True  # False: no option has this key

    def __str__(self) -> str:
        if not self.known:
            return f"{self.owner}: unknown option {self.key!r} (valid: {self.valid})"
        return f"{self.owner}: {self.key}={self.value!r} (valid: {self.valid})"


@dataclass
class ProtocolError(XcplabError):
    """A request an agent cannot act on (unknown verb, a verb out of order)."""

    cmd: str
    reason: str

    def __str__(self) -> str:
        return f"{self.cmd!r}: {self.reason}"


@dataclass
class ControlError(XcplabError):
    """An engine's control socket refused a request or went away."""

    socket: str
    cmd: str
    reason: str

    def __str__(self) -> str:
        return f"{self.cmd}: {self.reason}"


@dataclass
class SourceFormatError(XcplabError):
    """A counter source (a /proc file, an engine histogram) in a form this agent cannot
    read; samplers turn it into empty cells rather than lose the whole sample."""

    source: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}"

"""YAML text -> plain data plus the line of every key and list item.

ruamel.yaml's round-trip loader keeps marks; we convert to plain dicts/lists
(what pydantic validates) and keep a `Lines` index from YAML path tuples to
1-based line numbers so every problem can point at its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scalarbool import ScalarBoolean

from orchestrator.errors import SpecError, SpecProblem

PathT = tuple[str | int, ...]


@dataclass
class Lines:
    """Line of each YAML path; paths set by `--set` have no line."""

    file: str
    by_path: dict[PathT, int] = field(default_factory=dict)
    overridden: set[PathT] = field(default_factory=set)

    def line(self, path: PathT) -> int | None:
        """Line of the longest known prefix of `path` (None if it came from --set)."""
        for n in range(len(path), -1, -1):
            prefix = path[:n]
            if prefix in self.overridden:
                return None
            if prefix in self.by_path:
                return self.by_path[prefix]
        return None

    def from_override(self, path: PathT) -> bool:
        return any(path[:n] in self.overridden for n in range(len(path) + 1))

    def problem(self, path: PathT, reason: str) -> SpecProblem:
        if self.from_override(path):
            reason += " (value from --set)"
        return SpecProblem(self.file, self.line(path), format_path(path), reason)


def format_path(path: PathT) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top)"


def _plain(node: Any, path: PathT, lines: Lines) -> Any:
    if isinstance(node, CommentedMap):
        out = {}
        for key, value in node.items():
            kpath = (*path, str(key))
            try:
                lines.by_path[kpath] = node.lc.key(key)[0] + 1
            except (KeyError, TypeError):  # merged keys (<<) have no own mark
                lines.by_path[kpath] = lines.by_path.get(path, 1)
            out[str(key)] = _plain(value, kpath, lines)
        return out
    if isinstance(node, CommentedSeq):
        out_list = []
        for i, value in enumerate(node):
            ipath = (*path, i)
            lines.by_path[ipath] = node.lc.item(i)[0] + 1
            out_list.append(_plain(value, ipath, lines))
        return out_list
    # ruamel's scalar subclasses (ScalarFloat, ScalarBoolean is an int...) -> plain types
    if isinstance(node, ScalarBoolean | bool):
        return bool(node)
    for plain in (str, int, float):
        if isinstance(node, plain):
            return plain(node)
    return node


def load_yaml(text: str, file: str) -> tuple[Any, Lines]:
    """Parse YAML text; raise SpecError (with line) if it is not valid YAML."""
    yaml = YAML(typ="rt")
    lines = Lines(file)
    try:
        doc = yaml.load(text)
    except DuplicateKeyError as e:
        line = e.problem_mark.line + 1 if e.problem_mark else None
        raise SpecError([SpecProblem(file, line, "(yaml)",
                                     f"duplicate key: {e.problem.strip()}")]) from e
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else None
        raise SpecError([SpecProblem(file, line, "(yaml)",
                                     f"not valid YAML: {e.problem or e.context}")]) from e
    except ReaderError as e:  # bytes YAML does not allow (NUL, control characters)
        line = text[:max(e.position, 0)].count("\n") + 1
        raise SpecError([SpecProblem(file, line, "(yaml)",
                                     f"not valid YAML: character {e.character!r} is not "
                                     "allowed")]) from e
    except YAMLError as e:
        raise SpecError([SpecProblem(file, None, "(yaml)", f"not valid YAML: {e}")]) from e
    lines.by_path[()] = 1
    data = _plain(doc, (), lines)
    if not isinstance(data, dict):
        raise SpecError([SpecProblem(file, 1, "(top)",
                                     "a spec is a YAML mapping with name, duration, nodes, "
                                     "links, flows ...")])
    return data, lines

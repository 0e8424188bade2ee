"""YAML text -> plain data plus the line of every key and list item.

libyaml (PyYAML's C parser) composes the node graph with marks; we construct
plain dicts/lists from it (what pydantic validates) and walk the same graph to
keep a `Lines` index from YAML path tuples to 1-based line numbers, so every
problem can point at its line. Duplicate keys are errors (PyYAML would keep the
last silently). Scalars follow YAML 1.2 where 1.1 surprises people: only
true/false are booleans (`on`, `no`, `yes` stay strings) and `1e3` is a float.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from orchestrator.spec import bounds, guard
from xcplab_contract.errors import SpecError, SpecProblem

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


_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """Safe loader with YAML 1.2 booleans and floats."""


# YAML 1.2 core schema for booleans, integers and floats (drop 1.1's yes/no/on/off,
# sexagesimal 1:30 = 90, 0b/underscore forms).
_CORE = {
    "tag:yaml.org,2002:bool": (r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    "tag:yaml.org,2002:int": (r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    "tag:yaml.org,2002:float": (
        (r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"), "-+0123456789."),
}
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in rules if tag not in _CORE]
    for first, rules in _Base.yaml_implicit_resolvers.items()}
for _tag, (_rx, _first) in _CORE.items():
    _Loader.add_implicit_resolver(_tag, re.compile(_rx), list(_first))


def _core_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    return int(text, 0) if text[:2] in ("0x", "0o") else int(text, 10)  # 010 is ten


_Loader.add_constructor("tag:yaml.org,2002:int", _core_int)


def _checked_loader(text: str) -> _Loader:
    """A loader over `text` once its event stream is within the shape bounds
    (guard.ShapeError otherwise): composing it is then bounded in depth and size."""
    scan = _Loader(text)
    try:
        guard.check_yaml(scan)
    finally:
        scan.dispose()
    return _Loader(text)


def parse_yaml_value(text: str) -> Any:
    """One YAML value with the spec's scalar rules (for `--set`); guard.ShapeError when
    it is too large, too deep or expands too far."""
    guard.check_size(text, bounds.MAX_OVERRIDE_BYTES, "the value")
    loader = _checked_loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _index(node: yaml.Node, path: PathT, lines: Lines, problems: list[SpecProblem]) -> None:
    """Record the line of every key and item under `node` (a composed YAML node)."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # merged keys keep the line of their mapping
            key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else None
            line = key_node.start_mark.line + 1
            if key is None:
                continue
            if key in seen:
                problems.append(SpecProblem(lines.file, line, format_path((*path, key)),
                                            f"duplicate key {key!r} (first at line "
                                            f"{seen[key]})"))
            seen[key] = line
            lines.by_path[(*path, key)] = line
            _index(value_node, (*path, key), lines, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines.by_path[(*path, i)] = item.start_mark.line + 1
            _index(item, (*path, i), lines, problems)


def _stringify_keys(data: Any) -> Any:
    if isinstance(data, dict):
        return {str(k): _stringify_keys(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_stringify_keys(v) for v in data]
    return data


def load_yaml(text: str, file: str) -> tuple[Any, Lines]:
    """Parse YAML text; raise SpecError (with line) if it is not valid YAML."""
    lines = Lines(file)
    problems: list[SpecProblem] = []
    try:
        guard.check_size(text, bounds.MAX_SPEC_BYTES, "the spec")
        loader = _checked_loader(text)
        try:
            node = loader.get_single_node()
            # index first: constructing flattens merge keys (<<) into the node in place
            if node is not None:
                _index(node, (), lines, problems)
            doc = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except guard.ShapeError as e:
        raise SpecError([SpecProblem(file, e.line, "(yaml)", e.reason)]) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else None
        raise SpecError([SpecProblem(file, line, "(yaml)",
                                     f"not valid YAML: {e.problem or e.context}")]) from e
    except yaml.reader.ReaderError as e:  # characters YAML does not allow (NUL, controls)
        line = text[:max(e.position, 0)].count("\n") + 1
        raise SpecError([SpecProblem(file, line, "(yaml)",
                                     f"not valid YAML: character {e.character!r} is not "
                                     "allowed")]) from e
    except yaml.YAMLError as e:
        raise SpecError([SpecProblem(file, None, "(yaml)", f"not valid YAML: {e}")]) from e
    if not isinstance(doc, dict):
        raise SpecError([SpecProblem(file, 1, "(top)",
                                     "a spec is a YAML mapping with name, duration, nodes, "
                                     "links, flows ...")])
    lines.by_path[()] = 1
    if problems:
        raise SpecError(problems)
    return _stringify_keys(doc), lines

"""`--set path=value`: change a spec's data before validation.

Path grammar: dotted keys with list selectors, e.g. `duration`, `links[2].capacity`,
`links[bottleneck].capacity` (a list item chosen by its `id`; links without an
id are named `<a>-<b>`), `nodes.r1.queue`, `defaults.link.buffer`.
The value is read as YAML (`5s`, `0.5BDP`, `3`, `true`, `[f1, f2]`, `{kind: red}`).
Missing mapping keys are created; list items must exist.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from orchestrator.spec import bounds
from orchestrator.spec.guard import ShapeError
from orchestrator.spec.loader import Lines, PathT, format_path, parse_yaml_value
from xcplab_contract.errors import SpecError, SpecProblem

_PATH_HELP = "write e.g. duration, links[0].capacity or links[bottleneck].delay"
_PART = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


def parse_path(text: str) -> list[str | int | tuple[str]]:
    """`links[b].capacity` -> ['links', ('b',), 'capacity']; `[2]` -> 2."""
    parts: list[str | int | tuple[str]] = []
    pos = 0
    for m in _PART.finditer(text):
        between = text[pos:m.start()]
        if between not in ("", "."):
            raise ValueError(f"bad path {text!r} near {between!r}: {_PATH_HELP}")
        pos = m.end()
        key, sel = m.group(1), m.group(2)
        if key is not None:
            parts.append(key)
        elif sel is not None and sel.strip().lstrip("-").isdigit():
            parts.append(int(sel))
        elif sel:
            parts.append((sel.strip(),))
        else:
            raise ValueError(f"bad path {text!r}: empty []; {_PATH_HELP}")
    if pos != len(text) or not parts:
        raise ValueError(f"bad path {text!r}: {_PATH_HELP}")
    return parts


def _item_id(item: Any) -> str | None:
    if not isinstance(item, dict):
        return None
    if "id" in item:
        return str(item["id"])
    if "a" in item and "b" in item:
        return f"{item['a']}-{item['b']}"
    return None


def parse_value(text: str) -> Any:
    value = parse_yaml_value(text)
    return "" if value is None and text.strip() == "" else value


def apply_override(data: dict[str, Any], lines: Lines, assignment: str) -> None:
    """Apply one `path=value`; raise SpecError naming the override if it cannot apply."""
    def fail(reason: str) -> SpecError:
        return SpecError([SpecProblem("--set", None, assignment, reason)])

    if "=" not in assignment:
        raise fail("expected path=value, e.g. duration=5s or links[0].capacity=10Mbps")
    path_text, value_text = assignment.split("=", 1)
    try:
        parts = parse_path(path_text.strip())
    except ValueError as e:
        raise fail(str(e)) from e
    if len(parts) > bounds.YAML_MAX_DEPTH:
        raise fail(f"the path has {len(parts)} parts; at most {bounds.YAML_MAX_DEPTH}")
    try:
        value = parse_value(value_text)
    except ShapeError as e:
        raise fail(e.reason) from None
    except yaml.YAMLError as e:
        raise fail(f"the value is not valid YAML: {str(e).splitlines()[0]}") from e
    node: Any = data
    real: list[str | int] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(part, tuple):
            if not isinstance(node, list):
                raise fail(f"{format_path(tuple(real)) or '(top)'} is not a list")
            ids = [_item_id(x) for x in node]
            if part[0] not in ids:
                raise fail(f"no item with id {part[0]!r} in {format_path(tuple(real))} "
                           f"(ids: {', '.join(x for x in ids if x) or 'none'})")
            part = ids.index(part[0])
        if isinstance(part, int):
            if not isinstance(node, list) or not -len(node) <= part < len(node):
                size = len(node) if isinstance(node, list) else 0
                raise fail(f"{format_path(tuple(real))} has no item [{part}] "
                           f"({size} items)")
            part = part % len(node)
        elif not isinstance(node, dict):
            raise fail(f"{format_path(tuple(real)) or '(top)'} is not a mapping")
        real.append(part)
        if last:
            node[part] = value
        else:
            if isinstance(part, str) and part not in node:
                node[part] = {}
            node = node[part]
    lines.overridden.add(tuple(real))


def apply_overrides(data: dict[str, Any], lines: Lines, assignments: list[str]) -> PathT | None:
    if len(assignments) > bounds.MAX_OVERRIDES:
        raise SpecError([SpecProblem("--set", None, "(overrides)",
                                     f"{len(assignments)} overrides; at most "
                                     f"{bounds.MAX_OVERRIDES}")])
    problems: list[SpecProblem] = []
    for a in assignments:
        try:
            apply_override(data, lines, a)
        except SpecError as e:
            problems.extend(e.problems)
    if problems:
        raise SpecError(problems)
    return None

"""Bounds on the shape of YAML and JSON input, checked before anything is built.

libyaml composes a node graph recursively (a few thousand `[` overflow the C stack) and
aliases share nodes that every later walk expands (a 300-byte "billion laughs" is 387 M
nodes to pydantic). So the text is first read as a flat event stream, which libyaml
parses without recursion, and refused when it nests deeper than YAML_MAX_DEPTH or
would expand to more than YAML_MAX_NODES nodes. Only then is it composed.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from orchestrator.spec import bounds


class ShapeError(ValueError):
    """Input too large, too deep or expanding too far; `line` is 1-based (or None)."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def check_size(text: str, limit: int, what: str) -> None:
    if len(text) > limit:
        raise ShapeError(f"{what} is {len(text)} characters; the limit is {limit}", 1)


def _too_deep(line: int | None) -> ShapeError:
    return ShapeError(f"nested deeper than {bounds.YAML_MAX_DEPTH} levels (a spec needs "
                      "fewer than 10)", line)


def _too_many(line: int | None) -> ShapeError:
    return ShapeError(f"more than {bounds.YAML_MAX_NODES} YAML nodes once aliases are "
                      "expanded (aliases of aliases multiply: write the values out)", line)


def check_yaml(loader: Any) -> None:
    """Walk a fresh loader's events (flat, no recursion) and raise ShapeError at the first
    event past the bounds. Per open collection: its expanded node count and the height of
    its deepest child; per anchor: the same for the node it names, so an alias costs what
    it expands to. yaml.YAMLError from malformed text propagates unchanged."""
    stack: list[list[Any]] = []           # [expanded nodes, height, anchor] per open collection
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (expanded nodes, height)
    total = 0
    while loader.check_event():
        ev = loader.get_event()
        line = ev.start_mark.line + 1 if ev.start_mark else None
        if isinstance(ev, yaml.CollectionStartEvent):
            stack.append([1, 0, ev.anchor])
            total += 1
            if len(stack) > bounds.YAML_MAX_DEPTH:
                raise _too_deep(line)
            if total > bounds.YAML_MAX_NODES:
                raise _too_many(line)
            continue
        if isinstance(ev, yaml.CollectionEndEvent):
            n, h, anchor = stack.pop()
            h += 1
            if anchor is not None:
                anchors[anchor] = (n, h)
        elif isinstance(ev, yaml.ScalarEvent):
            n, h = 1, 0
            total += 1
            if ev.anchor is not None:
                anchors[ev.anchor] = (n, h)
        elif isinstance(ev, yaml.AliasEvent):
            # an unknown anchor is the composer's error, reported after this scan
            n, h = anchors.get(ev.anchor or "", (1, 0))
            total += n
        else:
            continue  # stream and document events
        if total > bounds.YAML_MAX_NODES:
            raise _too_many(line)
        if len(stack) + h > bounds.YAML_MAX_DEPTH:
            raise _too_deep(line)
        if stack:
            parent = stack[-1]
            parent[0] += n
            parent[1] = max(parent[1], h)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ShapeError(f"duplicate key {k[:80]!r} in a JSON object")
        out[k] = v
    return out


def check_data(data: Any) -> None:
    """Depth and node count of parsed data (JSON has no aliases), without recursion."""
    todo: list[tuple[Any, int]] = [(data, 1)]
    seen = 0
    while todo:
        node, depth = todo.pop()
        seen += 1
        if seen > bounds.YAML_MAX_NODES:
            raise _too_many(None)
        if isinstance(node, dict | list):
            if depth > bounds.YAML_MAX_DEPTH:
                raise _too_deep(None)
            children = node.values() if isinstance(node, dict) else node
            todo.extend((c, depth + 1) for c in children)


def load_json(text: str) -> Any:
    """JSON with the YAML loader's rules: duplicate keys refused, depth and size bounded.
    json.JSONDecodeError for malformed text; ShapeError for the bounds."""
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise _too_deep(None) from None
    check_data(data)
    return data

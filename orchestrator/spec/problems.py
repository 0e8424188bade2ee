"""pydantic ValidationError -> SpecProblems with line, YAML path and a fix hint."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from orchestrator.spec.loader import Lines, PathT
from xcplab_contract.errors import SpecProblem


def _unwrap(tp: Any) -> Any:
    """Strip Optional/Annotated so we can walk to the model at a path."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
            tp = models[0] if models else args[0]
        else:
            return tp


def model_at(root: type[BaseModel], path: PathT) -> type[BaseModel] | None:
    tp: Any = root
    for part in path:
        tp = _unwrap(tp)
        origin = typing.get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = tp.model_fields.get(str(part))
            if field is None:
                return None
            tp = field.annotation
        elif origin is list and isinstance(part, int):
            tp = typing.get_args(tp)[0]
        elif origin is dict:
            tp = typing.get_args(tp)[1]
        else:
            return None
    tp = _unwrap(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _data_path(data: Any, loc: tuple[Any, ...]) -> PathT:
    """The part of pydantic's loc that exists in the data: union tags ('str', a queue's
    kind 'red') are skipped when what follows them is in the data, else the path ends."""
    out: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            node = node[part]
            out.append(part)
        elif not (isinstance(node, dict) and i + 1 < len(loc) and loc[i + 1] in node):
            break
    return tuple(out)


def _reason(err: Any, root: type[BaseModel], path: PathT) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        model = model_at(root, path[:-1])
        valid = ", ".join(model.model_fields) if model else "?"
        return f"unknown key {path[-1]!r}; valid keys: {valid}"
    if kind == "missing":
        return "required key missing"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    if kind == "union_tag_invalid":  # e.g. a queue kind no model registers
        valid = str(ctx.get("expected_tags", "")).replace("'", "")
        return f"{ctx.get('tag')!r} is not valid; valid: {valid}"
    if kind == "union_tag_not_found" and "_kind_of" in str(ctx.get("discriminator")):
        from orchestrator.spec.queues import KINDS

        return f"required key 'kind' missing; valid kinds: {', '.join(KINDS)}"
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "")
        return f"{err['input']!r} is not valid; valid: {expected}"
    if kind == "string_pattern_mismatch":
        return (f"{err['input']!r} is not a valid name: start with a letter, then letters, "
                "digits, '_' or '-', at most 24 characters")
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        model = model_at(root, path)
        valid = f" with keys {', '.join(model.model_fields)}" if model else ""
        return f"expected a mapping{valid}, got {err['input']!r}"
    return f"{err['msg']} (got {err['input']!r})"


def error_paths(exc: ValidationError, data: Any) -> list[PathT]:
    """Where in the data each error sits (for pruning)."""
    return [_data_path(data, tuple(err["loc"])) for err in exc.errors(include_url=False)]


def prune(data: Any, paths: list[PathT]) -> Any:
    """A copy of `data` without the keys/items at `paths` (mappings only: list
    items keep their indices so later problems point at the right line)."""
    import copy

    out = copy.deepcopy(data)
    for path in paths:
        if not path:
            continue
        node = out
        for part in path[:-1]:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                node = None
                break
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return out


def from_validation_error(exc: ValidationError, data: Any, lines: Lines,
                          root: type[BaseModel]) -> list[SpecProblem]:
    problems: list[SpecProblem] = []
    seen: set[tuple[PathT, str]] = set()
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        path = _data_path(data, loc)
        if err["type"] == "missing" and len(path) < len(loc):
            path = (*path, loc[len(path)])
        reason = _reason(err, root, path)
        if (path, reason) in seen:  # unions report one failure per member
            continue
        seen.add((path, reason))
        problems.append(lines.problem(path, reason))
    return problems

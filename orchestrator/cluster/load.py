"""Inventory YAML -> `Inventory`, or SpecError listing every problem as FILE:LINE: path: why.

The spec's loader does the YAML (line of every key, duplicate keys refused, shape
bounds) and its problem mapper turns pydantic errors into lines; this module adds the
rules across machines and the files an inventory points at. Relative key and
known_hosts paths are relative to the inventory file, so an inventory and its keys
can move together.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from orchestrator.cluster import bounds
from orchestrator.cluster.inventory import Inventory
from orchestrator.spec import guard
from orchestrator.spec.loader import Lines, load_yaml
from orchestrator.spec.problems import from_validation_error
from xcplab_contract.errors import SpecError, SpecProblem


def _resolve(base: Path, p: str) -> str:
    return str(p if os.path.isabs(p) else (base / p).resolve())


def _cross_checks(inv: Inventory, lines: Lines, base: Path) -> tuple[Inventory, list[SpecProblem]]:
    problems: list[SpecProblem] = []
    first_name: dict[str, int] = {}
    first_addr: dict[tuple[str, int], int] = {}
    machines = []
    for i, m in enumerate(inv.machines):
        if m.name in first_name:
            problems.append(lines.problem(("machines", i, "name"),
                                          f"duplicate machine name {m.name!r} (first at "
                                          f"machines[{first_name[m.name]}])"))
        first_name.setdefault(m.name, i)
        # Two entries for one sshd would make one machine do two machines' share.
        where = (m.address, m.ssh.port)
        if where in first_addr:
            problems.append(lines.problem(("machines", i, "address"),
                                          f"{m.address}:{m.ssh.port} is already "
                                          f"machines[{first_addr[where]}]"))
        first_addr.setdefault(where, i)
        key = _resolve(base, m.ssh.key)
        if not os.path.isfile(key):
            problems.append(lines.problem(("machines", i, "ssh", "key"),
                                          f"no such key file {key}"))
        machines.append(m.model_copy(update={"ssh": m.ssh.model_copy(update={"key": key})}))
    known = inv.known_hosts
    if known is not None:
        known = _resolve(base, known)
        if not os.path.isfile(known):
            problems.append(lines.problem(("known_hosts",), f"no such file {known}"))
    return inv.model_copy(update={"machines": machines, "known_hosts": known}), problems


def parse_inventory(text: str, file: str, base: Path) -> Inventory:
    try:
        guard.check_size(text, bounds.MAX_INVENTORY_BYTES, "the inventory")
    except guard.ShapeError as e:
        raise SpecError([SpecProblem(file, e.line, "(yaml)", e.reason)]) from None
    data: Any
    try:
        data, lines = load_yaml(text, file)
    except SpecError as e:  # the loader's top-level message speaks of specs
        for p in e.problems:
            if p.path == "(top)":
                p.reason = "an inventory is a YAML mapping with name and machines"
        raise
    try:
        inv = Inventory.model_validate(data)
    except ValidationError as e:
        raise SpecError(from_validation_error(e, data, lines, Inventory)) from None
    inv, problems = _cross_checks(inv, lines, base)
    if problems:
        raise SpecError(problems)
    return inv


def read_text_file(path: str | Path) -> str:
    """A cluster file's text (inventory, provider), or a SpecError naming the file."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError([SpecProblem(str(path), None, "(file)", f"cannot read: {e}")]) from e


def load_inventory(path: str | Path) -> Inventory:
    return parse_inventory(read_text_file(path), str(path), Path(path).resolve().parent)

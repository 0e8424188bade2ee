"""Specs that copy another spec with a stated difference stay copies: a change to the
original's topology, flows or checks that the variant misses would make the comparison
the variant was written for (docs/reproductions.md) compare different setups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

HSTCP = Path(__file__).resolve().parents[3] / "experiments" / "hstcp"


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((HSTCP / name).read_text())
    return data


def test_complex_tiers_noweb_is_complex_tiers_without_web_and_ftp6() -> None:
    """Its header: the 300 web sessions (`traffic:`) and ftp6 removed; same topology,
    scale, high-speed, reverse and other FTP flows, checks."""
    full, noweb = _load("complex-tiers.yaml"), _load("complex-tiers-noweb.yaml")
    assert "traffic" in full and "traffic" not in noweb
    flows = [f for f in full["flows"] if f["id"] != "ftp6"]
    assert len(flows) == len(full["flows"]) - 1, "complex-tiers.yaml has no ftp6 any more"
    assert noweb["flows"] == flows
    for key in sorted(set(full) - {"name", "description", "traffic", "flows"}):
        assert noweb.get(key) == full[key], f"complex-tiers-noweb.yaml differs in {key!r}"
    assert set(noweb) == set(full) - {"traffic"}

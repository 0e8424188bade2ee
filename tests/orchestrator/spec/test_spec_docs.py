"""docs/spec.md stays true: its snippets are valid YAML and its full spec validates."""

from __future__ import annotations

import re
from pathlib import Path

from ruamel.yaml import YAML

from orchestrator.spec import load_spec_text

DOC = Path(__file__).resolve().parents[3] / "docs" / "spec.md"


def _blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_snippets_parse_and_the_full_example_validates() -> None:
    blocks = _blocks()
    assert len(blocks) >= 8
    for b in blocks:
        YAML(typ="safe", pure=True).load(b)
    full = [b for b in blocks if b.startswith("name:")]
    assert full
    for b in full:
        load_spec_text(b, "docs/spec.md")

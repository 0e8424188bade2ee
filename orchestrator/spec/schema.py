"""The spec's JSON Schema, exported into the repository for editors.

Example specs start with
`# yaml-language-server: $schema=<relative path>/orchestrator/schema/xcplab-spec.schema.json`
so YAML editors complete keys and flag mistakes while typing; `xcplab validate`
remains the authority (cross-references, units, connectivity).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from orchestrator.spec.models import Spec

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "xcplab-spec.schema.json"
SCHEMA_ID = "https://xcplab.invalid/schema/xcplab-spec.schema.json"


def spec_schema() -> dict[str, Any]:
    schema = Spec.model_json_schema(mode="validation")
    # top-level `x-...` keys hold YAML anchors and are ignored (see orchestrator.spec)
    schema["patternProperties"] = {"^x-": {}}
    # a trial's `topology:` generates nodes and links (orchestrator/spec/trial.py)
    schema["required"] = [k for k in schema["required"] if k not in ("nodes", "links")]
    schema["anyOf"] = [{"required": ["nodes", "links"]}, {"required": ["topology"]}]
    return {**schema, "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": SCHEMA_ID, "title": "xcplab experiment spec"}


def schema_text() -> str:
    return json.dumps(spec_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

"""The exported JSON Schema is in sync, and every shipped spec passes it and the validator."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from orchestrator.spec import load_spec
from orchestrator.spec.schema import SCHEMA_PATH, schema_text

REPO = Path(__file__).resolve().parents[3]
SHIPPED = sorted((REPO / "experiments").rglob("*.yaml"))


def test_exported_schema_is_in_sync() -> None:
    assert SCHEMA_PATH.read_text() == schema_text(), "run `xcplab schema --write`"


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(json.loads(schema_text()))


@pytest.mark.parametrize("path", SHIPPED, ids=[str(p.relative_to(REPO)) for p in SHIPPED])
def test_shipped_specs_validate(path: Path) -> None:
    text = path.read_text()
    first = text.splitlines()[0]
    if "yaml-language-server: $schema=" in first:  # the editor hint points at the schema
        assert (path.parent / first.split("$schema=")[1].strip()).resolve() == SCHEMA_PATH
    else:
        assert path.parent.name not in ("experiments", "examples"), "add the $schema hint"
    data = YAML(typ="safe", pure=True).load(text)
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text()))
    load_spec(path)


@pytest.mark.parametrize(("data", "fragment"), [
    ({"capacity": "30Mbs"}, "does not match"),
    ({"buffer": "100frames"}, "does not match"),
    ({"colour": "red"}, "Additional properties"),
])
def test_schema_rejects_what_the_validator_rejects(data: dict[str, str], fragment: str) -> None:
    schema = json.loads(schema_text())
    link = {"$defs": schema["$defs"], **schema["$defs"]["LinkParams"]}
    with pytest.raises(jsonschema.ValidationError, match=fragment):
        jsonschema.validate(data, link)


def test_schema_accepts_shorthands() -> None:
    schema = json.loads(schema_text())
    link = {"$defs": schema["$defs"], **schema["$defs"]["LinkParams"]}
    for data in ({"queue": "xcp", "loss": "1%"}, {"loss": 0.01}, {"buffer": "0.5BDP"},
                 {"loss": {"model": "gilbert_elliott", "p": "1%", "r": 0.3}}):
        jsonschema.validate(data, link)

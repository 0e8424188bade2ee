"""The typed queue models (orchestrator/spec/queues/) and the one bound table they share
with the engine (xcplab_contract/bounds.json).

The cross-language test runs the built engine's config check (`xcp-router --config F
--check`, no root needed to get past config parsing): every bounded queue field at its
table edges is accepted by `validate` and by the engine's parser, and just past them
refused by both, naming the field. Skips without a built engine.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import typing
from pathlib import Path

import pytest

import orchestrator.spec.queues as queues_pkg
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec
from orchestrator.spec.queues import KINDS, QueueModel, QueueOption, queue_model
from orchestrator.spec.queues.base import Param
from xcplab_contract.bounds import TABLE, Bound
from xcplab_contract.errors import SpecError, XcplabError
from xcplab_contract.paths import tool

REPO = Path(__file__).resolve().parents[3]
SPEC = REPO / "experiments" / "quickstart.yaml"


def _params(model: type[typing.Any]) -> dict[str, Param]:
    return {name: p for name, f in model.model_fields.items()
            for p in f.metadata if isinstance(p, Param)}


def test_every_kind_is_one_file_of_the_package() -> None:
    found: dict[str, str] = {}
    for m in pkgutil.iter_modules(queues_pkg.__path__):
        mod = importlib.import_module(f"orchestrator.spec.queues.{m.name}")
        for obj in vars(mod).values():
            if (isinstance(obj, type) and issubclass(obj, QueueModel) and obj is not QueueModel
                    and obj.__module__ == mod.__name__):
                (kind,) = typing.get_args(obj.model_fields["kind"].annotation)
                found[kind] = m.name
    assert sorted(found) == list(KINDS)
    assert all(found[k] == k for k in KINDS)  # droptail.py holds droptail, ...


def test_every_field_has_an_engine_name_and_numbers_a_bound() -> None:
    for kind in KINDS:
        model = queue_model(kind)
        params = _params(model)
        for name, f in model.model_fields.items():
            if name == "kind":
                continue
            ann = typing.get_args(f.annotation)
            if any(isinstance(a, type) and issubclass(a, QueueOption) for a in ann):
                continue
            assert name in params, f"{kind}.{name} has no engine param"
            numeric = any(a in (int, float) for a in ann)
            if numeric:
                assert params[name].bound in TABLE, f"{kind}.{name} has no row in bounds.json"


def test_unknown_kind_names_the_valid_ones() -> None:
    with pytest.raises(KeyError, match="valid: droptail, ixcp, red, xcp, xcpi"):
        queue_model("sfq")


def _text(model: type[typing.Any], name: str, value: float) -> str:
    meta = str(model.model_fields[name].annotation)
    if "parse_duration" in meta:
        return f"{value!r}s"
    if "parse_rate" in meta:
        return f"{int(value)}bps"
    ann = typing.get_args(model.model_fields[name].annotation)
    return str(int(value)) if int in ann else repr(value)


def _edges() -> list[tuple[str, str, float, bool]]:
    """(kind, field, value, inside the bound) at and past every bounded field's table
    edges. A rate is never 0 in a spec (the engine's 0 = "the link's" is the planner's)."""
    out = []
    for kind in KINDS:
        model = queue_model(kind)
        for name, p in _params(model).items():
            if p.bound is None or p.at != "port":
                continue
            b: Bound = TABLE[p.bound]
            lo = max(b.lo, 1) if "parse_rate" in str(model.model_fields[name].annotation) else b.lo
            out += [(kind, name, lo, True), (kind, name, b.hi, True),
                    (kind, name, b.hi + (1 if b.integer else max(abs(b.hi), 1) * 1e-3), False)]
            if b.lo > 0:
                out.append((kind, name, b.lo - 1 if b.integer else b.lo / 2, False))
    # RED's order rule (max_th > min_th) decides before the bound at these two
    return [e for e in out if e[:3] not in (("red", "min_th", 1e9), ("red", "max_th", 0))]


def _engine() -> Path:
    try:
        return tool("xcp-router")
    except XcplabError as e:
        pytest.skip(str(e))


@pytest.mark.parametrize(("kind", "field", "value", "inside"), _edges(),
                         ids=[f"{k}.{f}={v:g}" for k, f, v, _ in _edges()])
def test_validate_and_engine_share_the_bound(kind: str, field: str, value: float, inside: bool,
                                             tmp_path: Path) -> None:
    engine = _engine()
    model = queue_model(kind)
    p = _params(model)[field]
    # the companions a value inside its bound needs to pass the models' order rules
    other = {"min_th": "max_th: 1e9", "max_th": "min_th: 0", "min_interval": "max_interval: 10s",
             "max_interval": "min_interval: 1ms"}.get(field, "") if inside else ""
    given = f"{field}: {_text(model, field, value)}" + (f", {other}" if other else "")
    queue = f"{{kind: {kind}, {given}}}"
    overrides = [f"nodes.r1.queue={queue}"]
    if inside:
        plan = make_plan(load_spec(SPEC, overrides), "t-1")
        cfg = plan.engine_file(["r1"], str(tmp_path / "ctl.sock"))
    else:
        with pytest.raises(SpecError) as e:
            load_spec(SPEC, overrides)
        assert f"queue.{field}" in str(e.value) and "is outside" in str(e.value)
        # the engine gets the same value under its own name: it must refuse it too
        plan = make_plan(load_spec(SPEC, ["nodes.r1.queue=" + kind]), "t-1")
        cfg = plan.engine_file(["r1"], str(tmp_path / "ctl.sock"))
        for port in cfg["routers"][0]["ports"]:
            port["egress"]["queue"]["params"][p.engine] = value
    path = tmp_path / "engine.json"
    path.write_text(json.dumps(cfg))
    r = subprocess.run([str(engine), "--config", str(path), "--check"], capture_output=True,
                       text=True, timeout=30, check=False)
    config_error = "routers[" in r.stderr
    if inside:
        assert not config_error, r.stderr  # past config parsing (ports may not exist here)
    else:
        assert config_error and f"queue.params.{p.engine}" in r.stderr, r.stderr


def test_the_engine_knows_the_same_kinds(tmp_path: Path) -> None:
    """The engine's kinds are the files of router-image/src/qdisc/kinds/, the spec's the
    files of orchestrator/spec/queues/: both lists are generated, and must agree."""
    engine = _engine()
    plan = make_plan(load_spec(SPEC), "t-1")
    cfg = plan.engine_file(["r1"], str(tmp_path / "ctl.sock"))
    cfg["routers"][0]["ports"][0]["egress"]["queue"]["kind"] = "nosuch"
    path = tmp_path / "engine.json"
    path.write_text(json.dumps(cfg))
    r = subprocess.run([str(engine), "--config", str(path), "--check"], capture_output=True,
                       text=True, timeout=30, check=False)
    assert f'unknown "nosuch", valid values: {", ".join(KINDS)}' in r.stderr, r.stderr
    files = sorted(p.stem for p in (REPO / "router-image/src/qdisc/kinds").glob("*.cc"))
    assert files == list(KINDS)

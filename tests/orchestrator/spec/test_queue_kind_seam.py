"""The queue-kind seam (issue 25): a new kind is a new model file and a new engine file,
with no list to edit anywhere else.

Python side: a copy of the orchestrator gets one more file in orchestrator/spec/queues/
(a kind that exists only in this test) and nothing else; `xcplab validate` and `xcplab
plan` then accept it, validate its field against the shared bound table, carry its
params into the engine config, and the ns-2 backend refuses it by name (it declared no
ns-2 mapping). Engine side: `xcp-router --list-queue-kinds` names the files of
router-image/src/qdisc/kinds/, which must be the models' kinds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from orchestrator.spec.queues import KINDS
from xcplab_contract.errors import XcplabError
from xcplab_contract.paths import tool

REPO = Path(__file__).resolve().parents[3]

# The whole of a new kind on the Python side: its model, one file.
THROWAWAY_KIND = textwrap.dedent('''
    """`queue: {kind: fifo9, ...}`: a kind that exists only in tests/.../test_queue_kind_seam.py."""
    from __future__ import annotations

    from typing import Annotated, ClassVar, Literal

    from orchestrator.spec.queues.base import QueueModel, param


    class Fifo9Queue(QueueModel):
        kind: Literal["fifo9"]
        max_p: Annotated[float | None, param("max_p", "red.max_p")] = None
        colour: ClassVar[str] = "#000000"
''')

SPEC = textwrap.dedent("""
    name: seam
    duration: 2s
    seed: 1
    nodes:
      h1: {role: host}
      r1: {role: router, queue: {kind: fifo9, max_p: 0.25}}
      h2: {role: host}
    links:
      - {a: h1, b: r1, capacity: 10Mbps, delay: 1ms}
      - {a: r1, b: h2, capacity: 10Mbps, delay: 1ms}
    flows:
      - {id: f1, src: h1, dst: h2, proto: tcp, cc: reno}
""")

# In the copy: what validate says of the new kind's bad input, and what ns-2 says of it.
PROBE = textwrap.dedent("""
    import json, sys
    from orchestrator.backends.ns2.mapping import refusals
    from orchestrator.plan.planner import make_plan
    from orchestrator.spec import load_spec
    from xcplab_contract.errors import SpecError

    def error(override):
        try:
            load_spec(sys.argv[1], [override])
        except SpecError as e:
            return str(e)
        return ""

    print(json.dumps({
        "out_of_bound": error("nodes.r1.queue={kind: fifo9, max_p: 7}"),
        "unknown_kind": error("nodes.r1.queue=sfq"),
        "ns2": refusals(make_plan(load_spec(sys.argv[1]), "seam-1")),
    }))
""")


def _cli(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}  # the copy, not the checkout
    return subprocess.run([sys.executable, *args], cwd=tree, capture_output=True, text=True,
                          timeout=60, check=False, env=env)


@pytest.fixture(scope="module")
def tree_with_a_new_kind(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("seam")
    for pkg in ("orchestrator", "xcplab_contract"):
        shutil.copytree(REPO / pkg, tree / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "orchestrator/spec/queues/fifo9.py").write_text(THROWAWAY_KIND)
    (tree / "seam.yaml").write_text(SPEC)
    return tree


def test_a_new_model_file_is_a_kind_validate_and_plan_accept(tree_with_a_new_kind: Path) -> None:
    tree = tree_with_a_new_kind
    assert "fifo9" not in KINDS  # only the copy has it
    r = _cli(tree, "-m", "orchestrator.cli", "validate", "seam.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    r = _cli(tree, "-m", "orchestrator.cli", "plan", "seam.yaml", "--json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    dirs = [link[d] for link in plan["links"] for d in ("a_to_b", "b_to_a")]
    assert len(dirs) == 4 and all(d["emulated_by"] == "r1" for d in dirs)  # r1 emulates all
    assert [d["queue"]["kind"] for d in dirs] == ["fifo9"] * 4
    assert all(d["queue"]["params"] == {"max_p": 0.25} for d in dirs)


def test_the_new_kind_is_bounded_named_and_refused_by_ns2(tree_with_a_new_kind: Path) -> None:
    tree = tree_with_a_new_kind
    (tree / "probe.py").write_text(PROBE)
    r = _cli(tree, "probe.py", "seam.yaml")
    assert r.returncode == 0, r.stderr
    said = json.loads(r.stdout)
    # its field against the shared bound table (red.max_p's row)
    assert "queue.max_p" in said["out_of_bound"] and "is outside" in said["out_of_bound"]
    assert "fifo9" in said["unknown_kind"]  # the valid kinds named include the new one
    # it declares no ns-2 mapping: refused by name, never run as something else
    assert ("link r1->h2: queue kind fifo9: ns-2.35 has no such queue (it has droptail, red, "
            "xcp)") in said["ns2"]


def test_the_engine_lists_the_models_kinds() -> None:
    try:
        engine = tool("xcp-router")
    except XcplabError as e:
        pytest.skip(str(e))
    r = subprocess.run([str(engine), "--list-queue-kinds"], capture_output=True, text=True,
                       timeout=30, check=True)
    assert r.stdout.split() == list(KINDS)

"""Inventory validation: every bad inventory gives FILE:LINE: path: reason, and the clock
estimate takes the tightest exchange."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cluster import bounds
from orchestrator.cluster.clock import estimate
from orchestrator.cluster.load import load_inventory, parse_inventory
from xcplab_contract.errors import SpecError

MACHINE = """\
  - name: {name}
    address: {address}
    ssh: {{user: root, key: id, port: 22}}
    cores: 4
    nic_capacity: 10Gbps
    mtu: 1500
    roles: [routers]
"""


def _inv(*machines: tuple[str, str], head: str = "name: lab\n") -> str:
    return head + "machines:\n" + "".join(MACHINE.format(name=n, address=a) for n, a in machines)


@pytest.fixture
def base(tmp_path: Path) -> Path:
    (tmp_path / "id").write_text("not a real key\n")
    return tmp_path


def _problems(text: str, base: Path) -> list[str]:
    with pytest.raises(SpecError) as e:
        parse_inventory(text, "inv.yaml", base)
    return [str(p) for p in e.value.problems]


def test_valid_inventory_resolves_key_relative_to_file(base: Path) -> None:
    (base / "inv.yaml").write_text(_inv(("m1", "10.0.0.1"), ("m2", "node-2.example.org")))
    inv = load_inventory(base / "inv.yaml")
    assert [m.name for m in inv.machines] == ["m1", "m2"]
    assert inv.machines[0].ssh.key == str(base / "id")
    assert inv.machines[0].nic_capacity == 10 * 10**9
    assert inv.machines[1].prefix == "/opt/xcplab"


@pytest.mark.parametrize("old, new, expected", [
    ("mtu: 1500", "mtu: 100", "inv.yaml:8: machines[0].mtu: Input should be greater than or "
                              "equal to 576"),
    ("nic_capacity: 10Gbps", "nic_capacity: 10", "inv.yaml:7: machines[0].nic_capacity: 10 has "
                                                  "no unit"),
    ("cores: 4", "cores: 0", "inv.yaml:6: machines[0].cores: Input should be greater than"),
    ("port: 22", "port: 70000", "inv.yaml:5: machines[0].ssh.port: Input should be less than"),
    ("address: 10.0.0.1", "address: -oProxyCommand=x", "inv.yaml:4: machines[0].address: "
                                                      "'-oProxyCommand=x' is not a host name"),
    ("roles: [routers]", "roles: [routers]\n    colour: red",
     "inv.yaml:10: machines[0].colour: unknown key 'colour'; valid keys: name, address"),
    ("roles: [routers]", "roles: [routers]\n    prefix: /opt/../etc",
     "inv.yaml:10: machines[0].prefix: '/opt/../etc' climbs out with '..'"),
    ("roles: [routers]", "roles: [routers]\n    python: py thon",
     "inv.yaml:10: machines[0].python: 'py thon' is not a python3 command or absolute path"),
    ("key: id", "key: missing", "inv.yaml:5: machines[0].ssh.key: no such key file"),
])
def test_bad_machine_field(base: Path, old: str, new: str, expected: str) -> None:
    text = _inv(("m1", "10.0.0.1"))
    assert old in text
    problems = _problems(text.replace(old, new, 1), base)
    assert any(p.startswith(expected) for p in problems), problems


def test_duplicates_point_at_the_second_entry(base: Path) -> None:
    problems = _problems(_inv(("m1", "10.0.0.1"), ("m1", "10.0.0.1")), base)
    assert problems == [
        "inv.yaml:10: machines[1].name: duplicate machine name 'm1' (first at machines[0])",
        "inv.yaml:11: machines[1].address: 10.0.0.1:22 is already machines[0]",
    ]


def test_bounds(base: Path) -> None:
    n = bounds.MAX_MACHINES + 1
    problems = _problems(_inv(*[(f"m{i}", f"10.0.{i // 250}.{i % 250 + 1}") for i in range(n)]),
                         base)
    assert any("machines: List should have at most 64 items" in p for p in problems), problems
    assert _problems("name: lab\nmachines: []\n", base) == [
        "inv.yaml:2: machines: List should have at least 1 item after validation, not 0 (got [])"]
    huge = "name: lab\n#" + "x" * bounds.MAX_INVENTORY_BYTES
    assert "the limit is" in _problems(huge, base)[0]


def test_not_a_mapping_and_duplicate_keys(base: Path) -> None:
    assert _problems("- m1\n", base) == [
        "inv.yaml:1: (top): an inventory is a YAML mapping with name and machines"]
    problems = _problems(_inv(("m1", "10.0.0.1"), head="name: a\nname: b\n"), base)
    assert problems[0].startswith("inv.yaml:2: name: duplicate key 'name'")


def test_known_hosts_must_exist(base: Path) -> None:
    problems = _problems(_inv(("m1", "10.0.0.1"), head="name: lab\nknown_hosts: kh\n"), base)
    assert problems == [f"inv.yaml:2: known_hosts: no such file {base / 'kh'}"]


def test_clock_estimate_uses_the_tightest_exchange() -> None:
    # machine clock 1 ms ahead; the 0.2 ms exchange bounds it best (symmetric delays)
    ahead = 1_000_000
    exchanges = [(0, 5_000_000 + ahead, 10_000_000),        # 10 ms rtt, asymmetric
                 (20_000_000, 20_100_000 + ahead, 20_200_000)]
    est = estimate(exchanges)
    assert est.offset_s == pytest.approx(0.001)
    assert est.rtt_s == pytest.approx(0.0002)
    assert est.error_bound_s == pytest.approx(0.0001)
    with pytest.raises(ValueError, match="backwards"):
        estimate([(10, 5, 5)])
    with pytest.raises(ValueError, match="no timestamp"):
        estimate([])


def test_vxlan_overhead_is_one_of_two_choices(base: Path) -> None:
    head = "name: lab\nvxlan_overhead: {}\n"
    ok = parse_inventory(_inv(("m1", "10.0.0.1"), head=head.format("reduce_mtu")), "inv.yaml",
                         base)
    assert ok.vxlan_overhead == "reduce_mtu"
    assert parse_inventory(_inv(("m1", "10.0.0.1")), "inv.yaml", base).vxlan_overhead == \
        "underlay"
    problems = _problems(_inv(("m1", "10.0.0.1"), head=head.format("shrink")), base)
    assert problems == ["inv.yaml:2: vxlan_overhead: 'shrink' is not valid; valid: underlay "
                        "or reduce_mtu"]

"""`xcplab cluster check` against the namespace cluster: real sshd, real SSH sessions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from nscluster import NsCluster

pytestmark = pytest.mark.root

ROOT = Path(__file__).resolve().parents[2]


def _xcplab(c: NsCluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(c.in_ctl([sys.executable, "-m", "orchestrator.cli", *args]),
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_check_reports_every_machine(nscluster: NsCluster) -> None:
    r = _xcplab(nscluster, "cluster", "check", str(nscluster.inventory))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 4 and lines[-1].endswith("3 machines, 0 problems"), r.stdout
    for m, line in zip(nscluster.machines, lines, strict=False):
        assert line.startswith(f"{m}: root@") and "mtu 1500 on eth0" in line, line
        # one host, one clock: the measured offset is within the exchange's error bound
        offset_ms = float(line.split("offset ")[1].split(" ms")[0])
        rtt_ms = float(line.split("(rtt ")[1].split(" ms")[0])
        assert abs(offset_ms) <= rtt_ms / 2 + 0.05, line


def test_check_finds_wrong_mtu_and_unreachable_machine(nscluster: NsCluster,
                                                       tmp_path: Path) -> None:
    text = nscluster.inventory.read_text()
    # m2 declares jumbo frames the underlay does not carry; m3 points at an address
    # nobody holds (the underlay is a /24 in the controller's namespace only)
    text = text.replace("mtu: 1500", "mtu: 9000", 2).replace("mtu: 9000", "mtu: 1500", 1)
    text = text.replace("172.31.0.13", "172.31.0.99")
    bad = nscluster.root / "bad-inventory.yaml"
    bad.write_text(text)
    r = _xcplab(nscluster, "cluster", "check", str(bad))
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    assert f"{bad}: machines[1] (m2): mtu is 1500 on eth0, inventory says 9000" in out, out
    assert f"{bad}: machines[2] (m3): unreachable over ssh" in out, out
    # m1's don't-fragment ping to m3's (wrong) address fails too: reported, not hidden
    assert f"{bad}: machines[0] (m1): no 1500-byte don't-fragment ping reaches m3" in out, out


def test_check_refuses_invalid_inventory(nscluster: NsCluster) -> None:
    bad = nscluster.root / "invalid.yaml"
    bad.write_text(nscluster.inventory.read_text().replace("cores: ", "cores: -", 1))
    r = _xcplab(nscluster, "cluster", "check", str(bad))
    assert r.returncode == 2
    assert r.stderr.startswith(f"{bad}:7: machines[0].cores: Input should be greater"), r.stderr

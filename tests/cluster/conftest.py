"""The namespace cluster (nscluster.py): three "machines", each a namespace with its own
sshd, on a bridge underlay; torn down in the finaliser whatever the tests did."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # nscluster
from nscluster import NsCluster, create


@pytest.fixture(scope="package")  # one cluster for every test here: it takes seconds
def nscluster() -> Iterator[NsCluster]:
    c = create(3)
    try:
        yield c
    finally:
        c.down()

"""Names of what a run creates: everything carries the run tag.

The run tag is 6 base36 characters derived from the run id (sha256), so it is
stable for a run and short enough to fit in interface aliases and namespace
names. `xcplab clean` finds a run's objects by `xcplab-<tag>`.
"""

from __future__ import annotations

import hashlib
import re

from xcplab_contract.errors import XcplabError

_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"
TAG_LEN = 6
PREFIX = "xcplab"
IFNAME_MAX = 15


# What any run id (generated or given with --run-id) may be: one path component that is
# neither hidden nor a parent reference, so `OUT/<run-id>` and `/run/xcplab/<run-id>`
# stay inside OUT and /run/xcplab, and namespace/interface names built from it are valid.
VALID_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def check_run_id(text: str) -> str:
    """`text` if it can be a run id; XcplabError naming the rule otherwise."""
    if not VALID_RUN_ID.match(text) or ".." in text:
        shown = text if len(text) <= 80 else text[:80] + "..."
        raise XcplabError(f"run id {shown!r}: a run id is a name, not a path: 1 to 100 "
                          "letters, digits, '_', '-' or '.', starting with a letter or digit, "
                          "without '..' (e.g. dumbbell-20260101T120000-ab12)")
    return text


def run_tag(run_id: str) -> str:
    n = int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:8], "big")
    out = []
    for _ in range(TAG_LEN):
        n, d = divmod(n, 36)
        out.append(_B36[d])
    return "".join(out)


def netns_name(tag: str, node: str) -> str:
    return f"{PREFIX}-{tag}-{node}"


def ifname(index: int) -> str:
    """Interface name inside a node's namespace (namespaces keep them apart)."""
    return f"eth{index}"


def if_alias(tag: str, node: str, link_id: str) -> str:
    return f"{PREFIX}-{tag}:{node}:{link_id}"


def port_name(router: str, ifname_: str) -> str:
    """Engine port name, CONFIG.md convention `router:ifname`."""
    return f"{router}:{ifname_}"

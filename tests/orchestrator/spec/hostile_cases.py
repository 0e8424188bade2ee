"""Generated hostile inputs (issue 14): each is small to write and huge or deep to read.

Shared by the CLI corpus (tests/orchestrator/spec/test_hostile_inputs.py) and the API
corpus (tests/service/test_api_hostile.py). Every generator returns text.
"""

from __future__ import annotations

from spec_cases import BASE


def alias_bomb_flow(levels: int = 9, width: int = 9) -> str:
    """`[&a [x,..], &b [*a,..], ...]`: width**levels leaves in ~300 bytes."""
    parts = [f"&a [{','.join(['x'] * width)}]"]
    for i in range(1, levels):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        parts.append(f"&{name} [{','.join(['*' + prev] * width)}]")
    return "[" + ", ".join(parts) + "]"


def alias_bomb_doc(levels: int = 9, width: int = 9) -> str:
    """The billion-laughs document: anchors in top-level `x-` keys, the last one used."""
    lines = [f"x-a: &a [{','.join(['x'] * width)}]"]
    for i in range(1, levels):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"x-{name}: &{name} [{','.join(['*' + prev] * width)}]")
    return "\n".join(lines) + "\n" + BASE.replace("name: t", f"name: t\ndescription: *{name}")


def merge_bomb(levels: int = 12) -> str:
    """Mappings that merge (`<<`) the previous anchor twice under two keys: 2**levels."""
    lines = ["x-0: &m0 {k: v}"]
    for i in range(1, levels):
        lines.append(f"x-{i}: &m{i} {{l: *m{i - 1}, r: *m{i - 1}, <<: *m{i - 1}}}")
    return ("\n".join(lines) + "\n"
            + BASE.replace("name: t", f"name: t\ndescription: *m{levels - 1}"))


def deep_flow(n: int, closed: bool = True) -> str:
    return "name: " + "[" * n + ("]" * n if closed else "") + "\n"


def deep_flow_map(n: int) -> str:
    return "name: " + "{a: " * n + "x" + "}" * n + "\n"


def deep_block(n: int) -> str:
    return "".join(" " * i + f"k{i}:\n" for i in range(n)) + " " * n + "x\n"


def wide(n: int) -> str:
    """A flat list of n scalars: nothing deep, just many nodes."""
    return BASE + "x-wide: [" + ",".join(["1"] * n) + "]\n"


def many_keys(n: int) -> str:
    return BASE + "x-keys: {" + ",".join(f"k{i}: 1" for i in range(n)) + "}\n"


# name -> spec text; each must be refused with exit 2 / 4xx, quickly and in little memory.
SPEC_BODIES: dict[str, str] = {
    "deep-seq-30000-unclosed": deep_flow(30_000, closed=False),
    "deep-seq-20000": deep_flow(20_000),
    "deep-seq-33": deep_flow(33),
    "deep-map-5000": deep_flow_map(5_000),
    "deep-block-200": deep_block(200),
    "alias-bomb-flow": "name: t\ndescription: " + alias_bomb_flow() + "\n",
    "alias-bomb-doc": alias_bomb_doc(),
    "alias-deep-chain": ("x-a: &a " + "[" * 20 + "x" + "]" * 20
                         + "\nname: [[[[[[[[[[[[[[*a]]]]]]]]]]]]]]\n"),
    "merge-bomb": merge_bomb(),
    "wide-250k": wide(250_000),
    "many-keys-101k": many_keys(101_000),
    "over-1MiB": BASE + "# " + "x" * (1 << 20) + "\n",
}

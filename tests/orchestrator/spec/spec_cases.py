"""A small valid spec the tables edit; line numbers below refer to it."""

BASE = """\
name: t
duration: 10s
nodes:
  h1: {role: host}
  h2: {role: host}
  r1: {role: router, queue: xcp}
  r2: {role: router}
links:
  - {a: h1, b: r1, capacity: 10Mbps, delay: 5ms}
  - {id: core, a: r1, b: r2, capacity: 5Mbps, delay: 10ms}
  - {a: r2, b: h2, capacity: 10Mbps, delay: 5ms}
flows:
  - {id: f1, src: h1, dst: h2}
"""


def edit(*changes: tuple[str, str]) -> str:
    """BASE with each (old, new) replaced exactly once (asserts the old text exists)."""
    text = BASE
    for old, new in changes:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text

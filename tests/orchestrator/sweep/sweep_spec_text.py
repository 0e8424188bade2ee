"""The small valid spec the sweep tests sweep over (h1 - r1 - h2, one TCP flow; the
bottleneck link has id `bn`), named per test module."""


def two_hop_spec(name: str) -> str:
    return f"""\
name: {name}
duration: 2s
seed: 5
nodes:
  h1: {{role: host}}
  r1: {{role: router, queue: droptail}}
  h2: {{role: host}}
links:
  - {{a: h1, b: r1, capacity: 50Mbps, delay: 2ms, buffer: 1BDP}}
  - {{id: bn, a: r1, b: h2, capacity: 20Mbps, delay: 2ms, buffer: 1BDP}}
flows:
  - {{id: t1, proto: tcp, cc: reno, src: h1, dst: h2}}
"""

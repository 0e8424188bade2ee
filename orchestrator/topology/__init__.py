"""Generated topologies, emitted as ordinary xcplab specs.

A generator draws a `Topology` (routers, router-to-router links, flows between
routers: pure data, orchestrator.topology.model) from a seeded random source;
`emit` turns it into a spec dict / YAML that `xcplab validate` checks like a
hand-written one. Nothing here runs anything.

- `model`     the neutral data: Topology, RouterLink, FlowDraw
- `shapes`    router graphs: parking lots, random connected graphs (networkx)
- `emit`      Topology → spec (hosts per flow end, defaults, expectations)
- `multibottleneck`  issue 15's seeded random multi-bottleneck instances: a
              shape, random capacities and flow routes, kept only when the
              planner's routes give at least two max-min bottlenecks and no
              link carries data both ways

Issue 17's deployment trials (a `deployment` rule placing protocols on the
routers of a generated or imported topology) grow beside these: another
generator producing a Topology, and a rule choosing each router's queue.
"""

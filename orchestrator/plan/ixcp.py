"""iXCP in the plan (docs/protocol.md §5): link ids and the senders' access link ids.

Every emulated direction gets a 32-bit id drawn from the run's seed, in the spec's
link order (a->b, then b->a), so an id does not change when another link's queue
kind does; only directions whose queue is `ixcp` carry theirs, as the engine param
`link_id` (plan.json records it under the direction's queue). Ids are nonzero (the
engine reserves 0 for "no id") and distinct within a run.

Access link: the paper's sender starts with "its access link identifier". Here it is
the first iXCP direction on the flow's forward path — the host's own link when the
router behind it runs iXCP on that ingress, else the first iXCP router's output
link further on. A sender behind a non-iXCP first hop so still starts from an id a
router on its path will recognise (it takes part in that link's shuffling from its
first packet, as a new flow must not starve). An XCP flow whose path crosses no
iXCP link gets no id and sends no B block.
"""

from __future__ import annotations

import random
from typing import Any

from orchestrator.spec.queues import queue_model

ID_MAX = 2**32 - 1


def link_ids(planner: Any) -> dict[tuple[int, str], int]:
    """(link index, sending node) -> id, for the directions whose queue is ixcp."""
    rng = random.Random(f"xcplab-ixcp-link-ids:{planner.spec.seed}")
    used: set[int] = set()
    out: dict[tuple[int, str], int] = {}
    for k, link in enumerate(planner.spec.links):
        for sender in (link.a, link.b):
            v = rng.randint(1, ID_MAX)
            while v in used:
                v = rng.randint(1, ID_MAX)
            used.add(v)
            if _link_id_param(planner.rdir(k, sender).queue.kind):
                out[(k, sender)] = v
    return out


def _link_id_param(kind: str) -> str | None:
    """The engine param a kind takes its link id in (IxcpQueue; the model's
    `plan_queue` writes it), or None."""
    return queue_model(kind).link_id_param


def access_link_id(dirs: tuple[tuple[int, str], ...], ids: dict[tuple[int, str], int]
                   ) -> int | None:
    """The id of the first iXCP direction of a forward path, or None when it has none."""
    return next((ids[d] for d in dirs if d in ids), None)

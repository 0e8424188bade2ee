"""Pydantic field types for quantities written with units.

Each type parses the user's text with `orchestrator.units` (so the model holds
SI numbers) and publishes a JSON Schema that accepts the text form, so editors
validate `capacity: 30Mbps` and not `capacity: 30000000`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, WithJsonSchema

from orchestrator import units

_NUM = r"[0-9]*\.?[0-9]+([eE][+-]?[0-9]+)?"

Rate = Annotated[
    int,
    BeforeValidator(units.parse_rate),
    WithJsonSchema({"type": "string", "pattern": rf"^{_NUM}\s*([kKmMgGtT]?(bps|b/s|bit/s|bit))$",
                    "description": "bit rate: " + units.RATE_HELP, "examples": ["30Mbps"]}),
]

Duration = Annotated[
    float,
    BeforeValidator(units.parse_duration),
    WithJsonSchema({"type": "string", "pattern": rf"^{_NUM}\s*(ns|us|µs|ms|s|sec|min)$",
                    "description": "duration: " + units.DURATION_HELP, "examples": ["10ms"]}),
]

Size = Annotated[
    int,
    BeforeValidator(units.parse_size),
    WithJsonSchema({"type": "string",
                    "pattern": rf"^{_NUM}\s*(B|bytes|KB|kB|MB|GB|KiB|MiB|GiB)$",
                    "description": "size in bytes: " + units.SIZE_HELP, "examples": ["10MB"]}),
]

BufferSize = Annotated[
    units.Buffer,
    BeforeValidator(units.parse_buffer),
    WithJsonSchema({"type": "string",
                    "pattern": rf"^{_NUM}\s*(pkts|pkt|packets|packet|p|B|bytes|KB|kB|MB|GB|KiB"
                               r"|MiB|GiB|BDP|bdp)$",
                    "description": "buffer: " + units.BUFFER_HELP,
                    "examples": ["100pkts", "64KB", "1BDP"]}),
]

Probability = Annotated[
    float,
    BeforeValidator(units.parse_probability),
    WithJsonSchema({"anyOf": [{"type": "string", "pattern": rf"^{_NUM}\s*%$"},
                              {"type": "number", "minimum": 0, "maximum": 1}],
                    "description": "probability: a percentage (1%) or a number in 0..1"}),
]

# Names end up in namespace names, engine port names ("r1:eth0") and summary
# keys ("A->B"), hence no ':' '>' '/' or spaces.
NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,23}$"
Name = Annotated[str, Field(pattern=NAME_PATTERN)]

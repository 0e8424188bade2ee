"""One JSON-line reading for the three readers of a child's JSON stream (xcpperf's client
and receiver output, xcp-stackd's): agents/line_pump.json_object, fed through the real
pump from a pipe, the partial last line of a child killed mid-write included."""

from __future__ import annotations

import json
import os

from agents.flow_sampler import XcpperfReader
from agents.line_pump import json_object, pump_lines
from agents.stackd_reader import StackdReader
from agents.xcpi_sampler import XcpiReceiverReader

LINES = [
    "xcpperf: listening on 5201\n",                       # text: skipped
    "\n",                                                 # blank: skipped
    "  {broken\n",                                        # starts like an object: bad
    json.dumps({"event": "start", "data": {}}) + "\n",    # an object
    '{"event": "interval", "data": {"streams": []}}  \r\n',
    '{"event": "end", "da',                               # cut at EOF: bad
]


def test_json_object_skips_text_and_counts_bad_lines() -> None:
    assert json_object("hello\n") == (None, False)
    assert json_object("   \n") == (None, False)
    assert json_object("[1, 2]\n") == (None, False)  # not an object line: skipped
    assert json_object("{broken") == (None, True)
    assert json_object('{"a": 1} trailing') == (None, True)
    assert json_object(' {"event": "x", "data": {"k": 1}}\r\n') == (
        {"event": "x", "data": {"k": 1}}, False)


def test_the_three_readers_read_a_stream_alike() -> None:
    xcpperf, receiver = XcpperfReader(), XcpiReceiverReader()
    stackd = StackdReader("h", now=lambda: 0.0)
    readers: list[XcpperfReader | XcpiReceiverReader | StackdReader] = [
        xcpperf, receiver, stackd]
    for reader in readers:
        r, w = os.pipe()
        with os.fdopen(r, "rb") as src:
            with os.fdopen(w, "wb") as dst:
                dst.write("".join(LINES).encode())
            pump_lines(src, reader.feed, "test-pump").join(5.0)
        assert reader.bad_lines == 2, type(reader).__name__
    assert xcpperf.final is None and xcpperf.latest == {} and receiver.snapshot() is None
    assert stackd.started.is_set()

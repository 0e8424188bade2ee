"""XCP-i's chirp estimator against the oracle, in the emulator (issue 13).

Short version of tools/xcpi_estimator_accuracy.py: CBR cross traffic at 0 %, 30 %,
60 % and 90 % of the 30 Mb/s cloud link, 12 s each; figures per load: the median and
p90 of |estimate - truth| / C, the median bias, time to first estimate and probe
overhead. Fails (with the tool's message) when a run fails.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location(
        "xcpi_acc", REPO / "tools" / "xcpi_estimator_accuracy.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run() -> dict:
    tool = _tool()
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="xcplab-bench-xcpi-") as tmp:
        for load in (0.0, 0.3, 0.6, 0.9):
            d = tool.run(tool.spec_for("cbr", load, 12.0), Path(tmp))
            m = tool.measure(d)
            out[f"cbr_{round(load * 100)}"] = {
                k: m[k] for k in ("err_over_C_median", "err_over_C_p90", "bias_over_C_median",
                                  "first_estimate_s", "probe_overhead_over_C", "faithful")}
    return {"xcpi_estimator": out}

"""Where samples go: the run directory always, InfluxDB when configured.

InfluxSink (httpx) is imported lazily: a run that writes only files does not pay for
an HTTP client. The column layout is `xcplab_contract.columns`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from orchestrator.sinks.csv_sink import CsvSink

if TYPE_CHECKING:
    from orchestrator.sinks.influx import InfluxSink


def __getattr__(name: str) -> Any:
    if name == "InfluxSink":
        from orchestrator.sinks.influx import InfluxSink
        return InfluxSink
    raise AttributeError(name)


class Sinks:
    """Fan-out to every configured sink."""

    def __init__(self, csv: CsvSink, influx: InfluxSink | None = None):
        self.csv = csv
        self.influx = influx

    def write(self, measurement: str, rows: list[dict[str, Any]]) -> None:
        self.csv.write(measurement, rows)
        if self.influx is not None:
            self.influx.write(measurement, rows)

    def close(self) -> dict[str, Any]:
        self.csv.close()
        out: dict[str, Any] = {"rows": dict(self.csv.rows_written)}
        if self.influx is not None:
            out["influx"] = self.influx.close()
        return out


__all__ = ["CsvSink", "InfluxSink", "Sinks"]

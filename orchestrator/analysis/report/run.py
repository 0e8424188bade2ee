"""The page of one run: checks (paper vs measured), flows, links, fidelity, the run's figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from orchestrator.analysis import verdicts
from orchestrator.analysis.report.page import Page, num
from xcplab_contract.errors import XcplabError


def verdict(e: dict[str, Any]) -> str:
    return verdicts.label(e)


def measured(e: dict[str, Any]) -> str:
    what = e.get("check", "")
    return what.rsplit("measured ", 1)[-1] if "measured " in what else num(e.get("value"))


def expectation_rows(exps: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    for e in exps:
        v = verdict(e)
        got = f"not evaluated: {e['reason']}" if v == "SKIP" and e.get("reason") else measured(e)
        if verdicts.verdict(e) == "not_reproduced" and e.get("reason"):
            got += f" — not reproduced: {e['reason']}"
        if verdicts.verdict(e) == "unjudged" and e.get("measured_status"):
            got += f" (the numbers alone: {verdicts.LABELS[e['measured_status']]})"
        rows.append([v, str(e.get("name") or e.get("metric") or ""),
                     f"{e.get('op') or ''} {num(e.get('bound'))}".strip(),
                     str(e.get("paper") or "–"), got, e.get("check", "")])
    return rows


def run_page(run_dir: Path, out: Path) -> Page:
    s_path = run_dir / "summary.json"
    if not s_path.is_file():
        raise XcplabError(f"{run_dir}: no summary.json (not a finished run directory)")
    s = json.loads(s_path.read_text())
    slug = run_dir.name
    exps = s.get("expectations") or []
    counts = verdicts.count(exps)
    fid = s.get("fidelity") or {}
    page = Page(slug, f"{s.get('experiment', slug)} — {slug}", "run",
                f"status {s.get('status')}, {num(s.get('duration_s'))} s, expectations "
                f"{counts.passed}/{counts.evaluated} passed"
                + (f" ({counts.skipped} skipped)" if counts.skipped else "")
                + (f", {counts.not_reproduced} not reproduced" if counts.not_reproduced else "")
                + (f", {counts.unjudged} unjudged (unfaithful)" if counts.unjudged else "")
                + f", fidelity {'ok' if fid.get('ok') else 'PROBLEMS'}")
    page.sections.append(("Expectations (paper vs measured)",
                          ["verdict", "check", "bound", "paper", "measured", "detail"],
                          expectation_rows(exps)))
    page.sections.append(("Flows", ["flow", "proto", "src→dst", "MB", "Mb/s", "max-min Mb/s",
                                    "retrans", "srtt ms", "cwnd kB"],
                          [[fid_, str(f.get("proto")), f"{f.get('src')}→{f.get('dst')}",
                            num((f.get("bytes") or 0) / 1e6, ".4g"),
                            num(f.get("throughput_mbps")), num(f.get("maxmin_mbps")),
                            num(f.get("retransmits"), "d")
                            if isinstance(f.get("retransmits"), int) else "–",
                            num(f.get("srtt_mean_ms")),
                            num((f.get("cwnd_mean_bytes") or 0) / 1e3)]
                           for fid_, f in (s.get("flows") or {}).items()]))
    page.sections.append(("Links", ["link", "Mb/s", "utilisation", "queue mean", "queue max",
                                    "drops queue", "drops loss"],
                          [[name, num(lk.get("capacity_mbps")), num(lk.get("utilization")),
                            num(lk.get("mean_queue_pkts")), num(lk.get("max_queue_pkts")),
                            num(lk.get("drops_queue")), num(lk.get("drops_loss"))]
                           for name, lk in (s.get("links") or {}).items()]))
    page.notes = [f"fidelity: {p}" for p in fid.get("problems") or []]
    if s.get("error"):
        page.notes.insert(0, f"error: {s['error']}")
    for png in sorted((run_dir / "plots").glob("*.png")):
        name = f"{slug}-{png.name}"
        shutil.copyfile(png, out / name)
        page.images.append(name)
    return page

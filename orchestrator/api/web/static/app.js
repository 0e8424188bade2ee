// xcplab web interface: the one hand-written script (no build step, no libraries).
// - select[data-autosubmit] submits its form on change (run filter);
// - the live run page (#live) follows the run's server-sent events and draws the
//   throughput of each flow on a canvas from the metrics written so far.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  for (const sel of document.querySelectorAll("select[data-autosubmit]")) {
    sel.addEventListener("change", () => sel.form.submit());
  }
  const live = document.getElementById("live");
  if (live) followRun(live);
  const spec = document.querySelector("textarea[data-validate]");
  if (spec) validateAsYouType(spec);
});

// The submit form: the spec is checked by the server (the same validation as a submit)
// 600 ms after the last keystroke; its problems are listed under the text area.
function validateAsYouType(spec) {
  const form = spec.form, out = document.getElementById("as-you-type");
  let timer = null, seq = 0;
  const check = async () => {
    const mine = ++seq;
    const body = new FormData();
    for (const name of ["csrf", "spec", "overrides"]) body.append(name, form.elements[name].value);
    const r = await fetch(spec.dataset.validate, { method: "POST", body, credentials: "same-origin" });
    if (!r.ok || mine !== seq) return;
    const answer = await r.json();
    out.replaceChildren(...answer.lines.map((line) => {
      const li = document.createElement("li");
      li.textContent = line;
      li.className = answer.ok ? "ok" : "error";
      return li;
    }));
  };
  const later = () => { clearTimeout(timer); timer = setTimeout(() => check().catch(() => {}), 600); };
  spec.addEventListener("input", later);
  form.elements["overrides"].addEventListener("input", later);
}

function followRun(section) {
  const $ = (id) => document.getElementById(id);
  const source = new EventSource(section.dataset.events);
  let finished = false;
  source.addEventListener("progress", (ev) => {
    const p = JSON.parse(ev.data);
    $("state").textContent = p.state;
    $("state").className = "state state-" + p.state;
    $("progress").value = p.fraction;
    $("phase").textContent = p.phase;
    $("message").textContent = p.message;
    const pos = $("position");
    if (pos && p.state !== "queued") pos.remove();
  });
  source.addEventListener("end", () => {
    finished = true;
    source.close();
    pollMetrics().finally(() => { window.location.assign(section.dataset.result); });
  });
  source.onerror = () => {
    if (!finished) $("chart-note").textContent = "Lost the live stream; retrying…";
  };

  // Each live chart: which measurement, which column names a line, which is drawn.
  const charts = [
    { canvas: "chart", measurement: "flow", key: "flow", value: "throughput_bps", scale: 1e-6, unit: "Mb/s" },
    { canvas: "chart-util", measurement: "link", key: "link", value: "utilization", scale: 1, unit: "" },
    { canvas: "chart-queue", measurement: "link", key: "link", value: "queue_pkts", scale: 1, unit: "pkts" },
    { canvas: "chart-phi", measurement: "link", key: "link", value: "xcp_phi", scale: 1e-3, unit: "kB/interval" },
  ];
  for (const c of charts) c.series = new Map(); // line name -> [[t, y], ...]
  const offsets = { flow: 0, link: 0, event: 0 };
  const events = []; // [t, "kind target"]
  async function fetchRows(measurement) {
    const url = section.dataset.metrics + "?measurement=" + measurement + "&offset=" + offsets[measurement];
    const r = await fetch(url, { credentials: "same-origin" });
    if (!r.ok) return null;
    const m = await r.json();
    offsets[measurement] += m.rows.length;
    return m;
  }
  async function pollMetrics() {
    const ev = await fetchRows("event");
    if (ev && ev.columns.includes("t_s")) {
      const [it, ik, ig] = ["t_s", "kind", "target"].map((n) => ev.columns.indexOf(n));
      for (const row of ev.rows) events.push([Number(row[it]), row[ik] + " " + (ig >= 0 ? row[ig] : "")]);
    }
    for (const measurement of ["flow", "link"]) {
      const m = await fetchRows(measurement);
      if (!m) continue;
      for (const c of charts.filter((c) => c.measurement === measurement)) {
        const [it, ik, iv] = ["t_s", c.key, c.value].map((n) => m.columns.indexOf(n));
        if (it < 0 || ik < 0 || iv < 0) continue;
        for (const row of m.rows) {
          if (row[iv] === null || row[iv] === "") continue;
          const key = String(row[ik]);
          if (!c.series.has(key)) c.series.set(key, []);
          c.series.get(key).push([Number(row[it]), Number(row[iv]) * c.scale]);
        }
      }
    }
    let drawn = 0;
    for (const c of charts) {
      if (c.series.size) { draw($(c.canvas), c.series, c.unit, events); drawn += 1; }
    }
    if (drawn) $("chart-note").textContent = offsets.flow + " flow samples, " + offsets.link + " link samples, " + events.length + " events";
  }
  const timer = setInterval(() => {
    if (finished) { clearInterval(timer); return; }
    pollMetrics().catch(() => {});
  }, 1000);
}

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

function draw(canvas, series, unit, events) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 40;
  let tmax = 0, ymax = 0;
  for (const pts of series.values()) {
    for (const [t, y] of pts) { tmax = Math.max(tmax, t); ymax = Math.max(ymax, y); }
  }
  tmax = tmax || 1; ymax = (ymax || 1) * 1.1;
  ctx.clearRect(0, 0, w, h);
  ctx.strokeStyle = "#888"; ctx.fillStyle = "#333"; ctx.font = "12px sans-serif";
  ctx.beginPath(); ctx.moveTo(pad, 10); ctx.lineTo(pad, h - pad); ctx.lineTo(w - 10, h - pad);
  ctx.stroke();
  ctx.fillText(ymax.toPrecision(3) + " " + unit, 2, 20);
  for (const [t] of events) tmax = Math.max(tmax, t);
  ctx.fillText(tmax.toFixed(1) + " s", w - 60, h - pad + 16);
  ctx.strokeStyle = "#bbb"; ctx.setLineDash([4, 4]);
  events.forEach(([t, label], k) => { // timeline events: dashed verticals, labelled
    const x = pad + (w - pad - 10) * t / tmax;
    ctx.beginPath(); ctx.moveTo(x, 10); ctx.lineTo(x, h - pad); ctx.stroke();
    ctx.fillStyle = "#777"; ctx.fillText(label, x + 2, 24 + 12 * (k % 4));
  });
  ctx.setLineDash([]);
  let i = 0;
  for (const [flow, pts] of series) {
    const colour = COLOURS[i % COLOURS.length];
    ctx.strokeStyle = colour; ctx.beginPath();
    pts.forEach(([t, y], k) => {
      const x = pad + (w - pad - 10) * t / tmax, yy = (h - pad) - (h - pad - 10) * y / ymax;
      if (k === 0) ctx.moveTo(x, yy); else ctx.lineTo(x, yy);
    });
    ctx.stroke();
    ctx.fillStyle = colour; ctx.fillText(flow, pad + 10 + 70 * i, h - 8);
    i += 1;
  }
}

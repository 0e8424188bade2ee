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

  const series = new Map(); // flow -> [[t, Mb/s], ...]
  let offset = 0;
  async function pollMetrics() {
    const url = section.dataset.metrics + "?measurement=flow&offset=" + offset;
    const r = await fetch(url, { credentials: "same-origin" });
    if (!r.ok) return;
    const m = await r.json();
    const col = (name) => m.columns.indexOf(name);
    const [it, iflow, ibps] = [col("t_s"), col("flow"), col("throughput_bps")];
    if (it < 0 || iflow < 0 || ibps < 0) return;
    for (const row of m.rows) {
      if (row[ibps] === null || row[ibps] === "") continue;
      const key = String(row[iflow]);
      if (!series.has(key)) series.set(key, []);
      series.get(key).push([Number(row[it]), Number(row[ibps]) / 1e6]);
    }
    offset += m.rows.length;
    if (series.size) {
      $("chart-note").textContent = offset + " samples";
      draw($("chart"), series);
    }
  }
  const timer = setInterval(() => {
    if (finished) { clearInterval(timer); return; }
    pollMetrics().catch(() => {});
  }, 1000);
}

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

function draw(canvas, series) {
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
  ctx.fillText(ymax.toFixed(1) + " Mb/s", 2, 20);
  ctx.fillText(tmax.toFixed(1) + " s", w - 60, h - pad + 16);
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

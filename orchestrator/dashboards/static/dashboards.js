// xcplab dashboards: draws a Grafana dashboard (its JSON from /api/dashboards/uid/UID)
// with data from the server's Grafana-compatible /api/ds/query. Hand-written, no
// libraries, no build step (like the web interface's app.js).
// - layout: Grafana's grid (gridPos in 24 columns and 30 px rows); `row` panels are headers;
// - variables: each `query` variable's values from its own query; ?var-NAME=VALUE selects;
// - time: ?from=&to= (now-15m, epoch ms), ?refresh=5s (else the dashboard's `refresh`);
// - panels: timeseries as lines, state-timeline as coloured lanes, on canvases;
// - annotations: every enabled `annotations.list` query, marked on every panel.
// Each panel carries data-series, data-points and data-annotations (what it drew).
"use strict";

const COLOURS = ["#7eb26d", "#eab839", "#6ed0e0", "#ef843c", "#e24d42", "#1f78c1",
                 "#ba43a9", "#705da0", "#508642", "#cca300", "#447ebc", "#c15c17"];
const UNIT_MS = { ms: 1, s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7, w: 6.048e8, y: 3.1536e10 };

document.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("dashboard");
  if (root) new Dashboard(root).start().catch((e) => status("error: " + e.message, true));
});

function status(text, bad) {
  const s = document.getElementById("status");
  s.textContent = text;
  s.className = bad ? "error" : "muted";
}

// Grafana's relative times, for the x axis (the server resolves the same text itself).
function resolveTime(text, now) {
  if (/^\d+$/.test(text)) return Number(text);
  const m = /^now(?:-(\d+)(ms|s|m|h|d|w|y))?$/.exec(text);
  if (m) return now - (m[1] ? Number(m[1]) * UNIT_MS[m[2]] : 0);
  const t = Date.parse(text);
  if (Number.isNaN(t)) throw new Error("time " + text + ": expected now-15m, epoch ms or ISO");
  return t;
}

function durationMs(text) {
  const m = /^(\d+)(ms|s|m|h|d|w|y)$/.exec(text || "");
  return m ? Number(m[1]) * UNIT_MS[m[2]] : 0;
}

class Dashboard {
  constructor(root) {
    this.root = root;
    this.api = root.dataset.api;
    this.params = new URLSearchParams(window.location.search);
    this.vars = {};
    this.panels = [];
    this.timer = null;
    this.busy = false;
  }

  async post(body) {
    const r = await fetch(this.api + "/ds/query", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const answer = await r.json();
    if (!answer.results) throw new Error(answer.message || "HTTP " + r.status);
    return answer.results;
  }

  async start() {
    const r = await fetch(this.api + "/dashboards/uid/" + this.root.dataset.uid,
                          { credentials: "same-origin" });
    if (!r.ok) throw new Error("dashboard: HTTP " + r.status);
    this.dash = (await r.json()).dashboard;
    const time = this.dash.time || { from: "now-6h", to: "now" };
    this.from = this.params.get("from") || time.from;
    this.to = this.params.get("to") || time.to;
    this.refresh = this.params.has("refresh") ? this.params.get("refresh") : (this.dash.refresh || "");
    this.layout();
    await this.loadVariables();
    this.controls();
    await this.update();
    this.schedule();
  }

  layout() {
    for (const p of this.dash.panels || []) {
      const g = p.gridPos;
      const el = document.createElement("section");
      el.style.gridColumn = (g.x + 1) + " / span " + g.w;
      el.style.gridRow = (g.y + 1) + " / span " + g.h;
      el.dataset.panelId = p.id;
      if (p.type === "row") {
        el.className = "row-panel";
        el.textContent = p.title;
      } else {
        el.className = "panel";
        el.dataset.type = p.type;
        el.innerHTML = '<h3></h3><div class="plot"><canvas></canvas><div class="note">loading…</div></div><div class="legend"></div>';
        el.querySelector("h3").textContent = p.title;
        this.panels.push({ def: p, el });
      }
      this.root.appendChild(el);
    }
  }

  async loadVariables() {
    const box = document.getElementById("variables");
    for (const v of (this.dash.templating || {}).list || []) {
      const q = typeof v.query === "object" ? v.query.query : v.query;
      const results = await this.post({ from: this.from, to: this.to, queries: [
        { refId: "var", query: q, rawQuery: true, resultFormat: "table",
          datasource: v.datasource } ] });
      const frame = ((results.var || {}).frames || [])[0];
      let values = frame ? frame.data.values[frame.data.values.length - 1].map(String) : [];
      values = [...new Set(values)].sort();
      if (v.sort === 2) values.reverse();
      const wanted = this.params.get("var-" + v.name) || (v.current || {}).value;
      if (wanted && !values.includes(wanted)) values.unshift(wanted); // not written yet
      this.vars[v.name] = wanted || values[0] || "";
      const label = document.createElement("label");
      label.textContent = (v.label || v.name) + " ";
      const sel = document.createElement("select");
      sel.id = "var-" + v.name;
      for (const value of values) sel.add(new Option(value, value, false, value === this.vars[v.name]));
      sel.addEventListener("change", () => { this.vars[v.name] = sel.value; this.apply(); });
      label.appendChild(sel);
      box.appendChild(label);
    }
  }

  controls() {
    const f = document.getElementById("time-from"), t = document.getElementById("time-to");
    const r = document.getElementById("refresh");
    f.value = this.from; t.value = this.to;
    if (![...r.options].some((o) => o.value === this.refresh)) r.add(new Option(this.refresh, this.refresh));
    r.value = this.refresh;
    document.getElementById("controls").addEventListener("submit", () => {
      this.from = f.value.trim(); this.to = t.value.trim(); this.refresh = r.value;
      this.apply();
    });
    r.addEventListener("change", () => { this.refresh = r.value; this.apply(); });
  }

  apply() { // keep the URL shareable, as Grafana's is
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(this.vars)) p.set("var-" + k, v);
    p.set("from", this.from); p.set("to", this.to);
    if (this.refresh) p.set("refresh", this.refresh);
    window.history.replaceState(null, "", window.location.pathname + "?" + p);
    this.schedule();
    this.update().catch((e) => status("error: " + e.message, true));
  }

  schedule() {
    clearInterval(this.timer);
    const every = durationMs(this.refresh);
    if (every > 0) {
      this.timer = setInterval(() => {
        if (!this.busy) this.update().catch((e) => status("error: " + e.message, true));
      }, every);
    }
  }

  // One request for every panel's targets and every annotation query.
  async update() {
    this.busy = true;
    try {
      const now = Date.now();
      const range = [resolveTime(this.from, now), resolveTime(this.to, now)];
      const queries = [];
      for (const p of this.panels) {
        const width = Math.max(100, Math.round(p.el.querySelector(".plot").clientWidth));
        for (const t of p.def.targets || []) {
          queries.push({ refId: "p" + p.def.id + "-" + t.refId, query: t.query, rawQuery: true,
                         resultFormat: t.resultFormat || "time_series", datasource: t.datasource,
                         maxDataPoints: width });
        }
      }
      const annotations = ((this.dash.annotations || {}).list || []).filter((a) => a.query && a.enable !== false);
      annotations.forEach((a, i) => queries.push({ refId: "anno-" + i, query: a.query, rawQuery: true,
                                                   resultFormat: "table", datasource: a.datasource }));
      const results = await this.post({ from: this.from, to: this.to, variables: this.vars, queries });
      const marks = [];
      annotations.forEach((a, i) => marks.push(...annotationEvents(a, results["anno-" + i])));
      for (const p of this.panels) {
        const answers = (p.def.targets || []).map((t) => [t, results["p" + p.def.id + "-" + t.refId] || {}]);
        drawPanel(p, answers, range, marks);
      }
      this.root.dataset.refreshes = Number(this.root.dataset.refreshes) + 1;
      this.root.dataset.annotations = marks.length;
      status("updated " + new Date().toISOString().slice(11, 19) + " UTC · " + marks.length + " annotations");
    } finally {
      this.busy = false;
    }
  }
}

// Grafana's InfluxDB annotation mapping: time, textColumn, titleColumn, tagsColumn.
function annotationEvents(a, answer) {
  const frame = ((answer || {}).frames || [])[0];
  if (!frame) return [];
  const cols = frame.schema.fields.map((f) => f.name);
  const col = (name) => (name && cols.includes(name) ? frame.data.values[cols.indexOf(name)] : null);
  const times = col("Time") || [];
  const text = col(a.textColumn), title = col(a.titleColumn);
  const tags = (a.tagsColumn || "").split(",").map((s) => s.trim()).filter(Boolean).map(col).filter(Boolean);
  return times.map((t, k) => ({
    t, colour: a.iconColor || "#FF9830",
    tags: tags.map((c) => c[k]).filter((v) => v !== null && v !== ""),
    title: title ? title[k] : "", text: text ? text[k] : "" }));
}

function seriesLabel(frame, multi) {
  const labels = frame.schema.fields[1].labels || {};
  let name = Object.values(labels).join(" ") || frame.schema.name;
  if (multi) { // several targets: say which field each line is
    const m = /\("([^"]+)"\)/.exec(frame.schema.meta.executedQueryString || "");
    name = (m ? m[1] : frame.schema.refId) + (name ? " " + name : "");
  }
  return name;
}

function drawPanel(p, answers, range, marks) {
  const canvas = p.el.querySelector("canvas"), plot = p.el.querySelector(".plot");
  const note = p.el.querySelector(".note"), legend = p.el.querySelector(".legend");
  const series = [];
  const errors = [];
  for (const [t, answer] of answers) {
    if (answer.error) errors.push(t.refId + ": " + answer.error);
    for (const f of answer.frames || []) {
      const [ts, vs] = f.data.values;
      const pts = [];
      for (let i = 0; i < ts.length; i++) if (vs[i] !== null) pts.push([ts[i], vs[i]]);
      if (pts.length) series.push({ name: seriesLabel(f, answers.length > 1), pts });
    }
  }
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, plot.clientWidth * dpr);
  canvas.height = Math.max(1, plot.clientHeight * dpr);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const box = { w: plot.clientWidth, h: plot.clientHeight, left: 56, right: 8, top: 6, bottom: 18 };
  ctx.clearRect(0, 0, box.w, box.h);
  const x = (t) => box.left + (box.w - box.left - box.right) * (t - range[0]) / Math.max(1, range[1] - range[0]);
  const unit = ((p.def.fieldConfig || {}).defaults || {}).unit || "short";
  if (p.def.type === "state-timeline") drawLanes(ctx, box, x, series);
  else drawLines(ctx, box, x, series, unit);
  drawTimeAxis(ctx, box, x, range);
  // annotations: a dashed line on the canvas, a marker with its text to hover
  for (const old of plot.querySelectorAll(".annotation")) old.remove();
  let shown = 0;
  for (const m of marks) {
    if (m.t < range[0] || m.t > range[1]) continue;
    const px = x(m.t);
    ctx.strokeStyle = m.colour; ctx.setLineDash([3, 3]); ctx.beginPath();
    ctx.moveTo(px, box.top); ctx.lineTo(px, box.h - box.bottom); ctx.stroke(); ctx.setLineDash([]);
    const mk = document.createElement("div");
    mk.className = "annotation";
    mk.style.left = px + "px";
    mk.style.background = m.colour;
    mk.title = new Date(m.t).toISOString().slice(11, 23) + " " + [m.title, ...m.tags].filter(Boolean).join(" ") +
               (m.text ? "\n" + m.text : "");
    plot.appendChild(mk);
    shown += 1;
  }
  legend.replaceChildren(...series.slice(0, 40).map((s, i) => {
    const span = document.createElement("span");
    span.innerHTML = '<i style="background:' + COLOURS[i % COLOURS.length] + '"></i>';
    span.append(s.name);
    return span;
  }));
  p.el.dataset.series = series.length;
  p.el.dataset.points = series.reduce((n, s) => n + s.pts.length, 0);
  p.el.dataset.annotations = shown;
  p.el.classList.toggle("failed", errors.length > 0);
  note.textContent = errors.length ? errors.join("; ") : series.length ? "" : "No data";
}

function niceMax(v) {
  if (!(v > 0)) return 1;
  const e = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * e >= v) return m * e;
  return 10 * e;
}

// Grafana's units, the ones xcplab's dashboards use.
function formatValue(v, unit) {
  const si = (x, base, names) => {
    let i = 0;
    while (Math.abs(x) >= base && i < names.length - 1) { x /= base; i += 1; }
    return (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2)) + names[i];
  };
  switch (unit) {
    case "bps": return si(v, 1000, [" b/s", " kb/s", " Mb/s", " Gb/s"]);
    case "decbytes": return si(v, 1000, [" B", " kB", " MB", " GB"]);
    case "percentunit": return (v * 100).toFixed(0) + "%";
    case "ms": return si(v, 1000, [" ms", " s"]);
    case "s": return v < 1 ? (v * 1000).toFixed(0) + " ms" : v.toFixed(2) + " s";
    default: return si(v, 1000, ["", "k", "M", "G"]);
  }
}

function drawLines(ctx, box, x, series, unit) {
  let lo = 0, hi = 0;
  for (const s of series) for (const [, v] of s.pts) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  hi = niceMax(hi); lo = lo < 0 ? -niceMax(-lo) : 0;
  const y = (v) => box.h - box.bottom - (box.h - box.top - box.bottom) * (v - lo) / (hi - lo);
  ctx.font = "10px sans-serif"; ctx.fillStyle = "#666"; ctx.strokeStyle = "#eee"; ctx.lineWidth = 1;
  for (let k = 0; k <= 4; k++) {
    const v = lo + (hi - lo) * k / 4, py = y(v);
    ctx.beginPath(); ctx.moveTo(box.left, py); ctx.lineTo(box.w - box.right, py); ctx.stroke();
    ctx.fillText(formatValue(v, unit), 2, py + 3);
  }
  series.forEach((s, i) => {
    ctx.strokeStyle = COLOURS[i % COLOURS.length]; ctx.lineWidth = 1.5; ctx.beginPath();
    s.pts.forEach(([t, v], k) => (k ? ctx.lineTo(x(t), y(v)) : ctx.moveTo(x(t), y(v))));
    ctx.stroke();
  });
  ctx.lineWidth = 1;
}

function drawLanes(ctx, box, x, series) {
  const lane = (box.h - box.top - box.bottom) / Math.max(1, series.length);
  const colour = new Map();
  ctx.font = "10px sans-serif";
  series.forEach((s, i) => {
    const top = box.top + i * lane;
    s.pts.forEach(([t, v], k) => {
      if (!colour.has(v)) colour.set(v, COLOURS[colour.size % COLOURS.length]);
      const end = k + 1 < s.pts.length ? s.pts[k + 1][0] : t;
      ctx.fillStyle = colour.get(v);
      ctx.fillRect(x(t), top + 1, Math.max(1, x(end) - x(t)), lane - 2);
    });
    ctx.fillStyle = "#333"; ctx.fillText(s.name, 2, top + lane / 2 + 3);
  });
}

function drawTimeAxis(ctx, box, x, range) {
  ctx.fillStyle = "#666"; ctx.font = "10px sans-serif";
  const span = range[1] - range[0];
  for (let k = 0; k <= 4; k++) {
    const t = range[0] + span * k / 4;
    const text = new Date(t).toISOString().slice(11, span < 60000 ? 23 : 19);
    ctx.fillText(text, Math.min(x(t), box.w - 70), box.h - 5);
  }
}

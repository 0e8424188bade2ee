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

  const charts = liveCharts();
  const cursors = { flow: 0, link: 0, event: 0, xcpi: 0, ixcp: 0 }; // bytes of each file read
  const counts = { flow: 0, link: 0 }; // samples drawn
  const events = []; // [t, "kind target"]
  async function fetchRows(measurement, keys) {
    // Every complete row written since the last call, a page (5000 file rows) at a time.
    let columns = [], rows = [];
    for (let page = 0; page < 20; page++) {
      let url = section.dataset.metrics + "?measurement=" + measurement + "&cursor=" + cursors[measurement];
      if (keys) url += "&keys=" + encodeURIComponent(keys);
      const r = await fetch(url, { credentials: "same-origin" });
      if (!r.ok) break;
      const m = await r.json();
      if (m.columns.length) columns = m.columns;
      rows = rows.concat(m.rows);
      cursors[measurement] = m.next_cursor;
      if (!m.more) break;
    }
    if (measurement in counts) counts[measurement] += rows.length;
    return { columns, rows };
  }
  async function pollMetrics() {
    const ev = await fetchRows("event");
    if (ev.columns.includes("t_s")) {
      const [it, ik, ig] = ["t_s", "kind", "target"].map((n) => ev.columns.indexOf(n));
      for (const row of ev.rows) events.push([Number(row[it]), row[ik] + " " + (ig >= 0 ? row[ig] : "")]);
    }
    for (const measurement of ["flow", "link", "xcpi", "ixcp"]) {
      const mine = charts.all.filter((c) => c.measurement === measurement);
      const keys = mine.some((c) => c.long) ? mine.flatMap((c) => c.lines.map((l) => l[0])).join(",") : "";
      const m = await fetchRows(measurement, keys);
      if (measurement === "link") charts.xcpLinks.note(m);
      for (const c of mine) addRows(c, m);
    }
    let drawn = 0;
    for (const c of charts.all) {
      const shown = c.xcp ? charts.xcpLinks.active : null;
      if (c.series.size && draw($(c.canvas), c.series, c.unit, events, shown)) drawn += 1;
    }
    charts.xcpLinks.show();
    if (drawn) $("chart-note").textContent = counts.flow + " flow samples, " + counts.link + " link samples, " + events.length + " events";
  }
  const timer = setInterval(() => {
    if (finished) { clearInterval(timer); return; }
    pollMetrics().catch(() => {});
  }, 1000);
}

// The live charts: which measurement, which column names a line (`key`; long-form
// measurements name it by router and upstream), which columns are drawn (`lines`:
// [column or long-form key, suffix of the line's name, dashed]), scaled to `unit`.
// `xcp` charts are the XCP controller state of metrics/link.csv's xcp_* columns
// (docs/run-directory.md): drawn for the XCP ports that have left their idle state,
// in #xcp-state, which stays hidden while no row carries XCP state (a run without
// XCP / iXCP / XCP-i queues).
function liveCharts() {
  const $ = (id) => document.getElementById(id);
  const all = [
    { canvas: "chart", measurement: "flow", key: "flow", lines: [["throughput_bps", "", false]], scale: 1e-6, unit: "Mb/s" },
    { canvas: "chart-util", measurement: "link", key: "link", lines: [["utilization", "", false]], scale: 100, unit: "%" },
    { canvas: "chart-queue", measurement: "link", key: "link", lines: [["queue_pkts", "", false]], scale: 1, unit: "packets" },
    { canvas: "chart-phi", measurement: "link", key: "link", xcp: true, lines: [["xcp_phi", "", false]], scale: 1e-3, unit: "kB" },
    { canvas: "chart-h", measurement: "link", key: "link", xcp: true, lines: [["xcp_h", "", false]], scale: 1e-3, unit: "kB" },
    { canvas: "chart-pools", measurement: "link", key: "link", xcp: true,
      lines: [["xcp_pos_pool", " +", false], ["xcp_neg_pool", " −", true]], scale: 8e-6, unit: "Mb/s" },
    { canvas: "chart-d", measurement: "link", key: "link", xcp: true, lines: [["xcp_d", "", false]], scale: 1e3, unit: "ms" },
    { canvas: "chart-xcpi", measurement: "xcpi", long: "router", box: "xcpi-state",
      lines: [["estimate_bps", " estimate", false], ["truth_bps", " truth", true]], scale: 1e-6, unit: "Mb/s" },
    // iXCP ports (metrics/ixcp.csv, bytes/s): the input of flows bottlenecked elsewhere,
    // and the shuffle pools among the flows bottlenecked here
    { canvas: "chart-ixcp-y0", measurement: "ixcp", long: "link", box: "ixcp-state", xcp: true,
      lines: [["ixcp.y0", "", false]], scale: 8e-6, unit: "Mb/s" },
    { canvas: "chart-ixcp-pools", measurement: "ixcp", long: "link", box: "ixcp-state", xcp: true,
      lines: [["ixcp.R_pos", " +", false], ["ixcp.R_neg", " −", true]], scale: 8e-6, unit: "Mb/s" },
  ].filter((c) => $(c.canvas));
  for (const c of all) c.series = new Map(); // line name -> {group, dash, pts: [[t, y], ...]}
  const STATE = ["xcp_phi", "xcp_h", "xcp_pos_pool", "xcp_neg_pool", "xcp_y"];
  const xcpLinks = {
    seen: new Set(), active: new Set(),
    note(m) { // which links carry XCP state, and which have left the idle state (all zero)
      const il = m.columns.indexOf("link");
      const cols = ["xcp_d", ...STATE].map((n) => m.columns.indexOf(n)).filter((i) => i >= 0);
      const state = STATE.map((n) => m.columns.indexOf(n)).filter((i) => i >= 0);
      if (il < 0 || !cols.length) return;
      for (const row of m.rows) {
        if (!cols.some((i) => row[i] !== null && row[i] !== "")) continue;
        const link = String(row[il]);
        this.seen.add(link);
        if (state.some((i) => typeof row[i] === "number" && row[i] !== 0)) this.active.add(link);
      }
    },
    show() {
      const box = $("xcp-state");
      if (!box || !this.seen.size) return;
      box.hidden = false;
      const idle = this.seen.size - this.active.size;
      $("xcp-note").textContent = this.seen.size + " XCP port directions" +
        (idle ? ", " + idle + " idle (all state zero) not drawn" : "");
      for (const c of all) if (c.box && c.series.size) $(c.box).hidden = false;
    },
  };
  return { all, xcpLinks };
}

function addRows(c, m) {
  const col = (n) => m.columns.indexOf(n);
  const it = col("t_s");
  if (it < 0) return;
  if (c.long) { // t_s, node, port, link, key, value: one line per link (XCP-i: router and upstream) and key
    const [in_, il, ik, iv] = ["node", "link", "key", "value"].map(col);
    if (ik < 0 || iv < 0) return;
    for (const row of m.rows) {
      const line = c.lines.find((l) => l[0] === row[ik]);
      if (!line || typeof row[iv] !== "number" || !row[il]) continue;
      const group = c.long === "router" ? String(row[in_]) + " ← " + String(row[il]) : String(row[il]);
      push(c, group, line, Number(row[it]), row[iv]);
    }
    return;
  }
  const ik = col(c.key);
  if (ik < 0) return;
  for (const line of c.lines) {
    const iv = col(line[0]);
    if (iv < 0) continue;
    for (const row of m.rows) {
      if (typeof row[iv] !== "number") continue; // empty cell: not applicable here
      push(c, String(row[ik]), line, Number(row[it]), row[iv]);
    }
  }
}

// A line keeps at most MAX_POINTS points (the canvas is 800 px wide): past that, every
// other one is dropped, so a long run's page holds a bounded amount of data.
const MAX_POINTS = 4000;
function push(c, group, [, suffix, dash], t, y) {
  const name = group + suffix;
  if (!c.series.has(name)) c.series.set(name, { group, dash, pts: [] });
  const s = c.series.get(name);
  s.pts.push([t, y * c.scale]);
  if (s.pts.length > MAX_POINTS) s.pts = s.pts.filter((_, k) => k % 2 === 0);
}

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                 "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
const colourIndex = new Map(); // a line group (flow, link) keeps its colour on every chart
function colourOf(group) {
  if (!colourIndex.has(group)) colourIndex.set(group, colourIndex.size);
  return COLOURS[colourIndex.get(group) % COLOURS.length];
}

// Draws SERIES (name -> {group, dash, pts}) with the y axis in UNIT, the x axis in
// seconds and the timeline EVENTS as dashed verticals; only the groups in SHOWN when
// given. Records what it drew on the canvas (data-lines, data-points) and returns the
// number of lines.
function draw(canvas, series, unit, events, shown) {
  const lines = [...series].filter(([, s]) => !shown || shown.has(s.group));
  const ctx = canvas.getContext("2d");
  ctx.font = "12px sans-serif";
  // The legend: one entry per group (a link's + and − pools, a router's estimate and
  // truth share its colour; the heading says which is dashed), in rows under the axis.
  const w = canvas.width, h = canvas.height, left = 64, top = 10, right = 10, MAX_ROWS = 3;
  const groups = [...new Set(lines.map(([, s]) => s.group))];
  const legend = []; // [group, x, row]
  let lx = left, row = 0, cut = 0;
  for (const g of groups) {
    const width = 24 + ctx.measureText(g).width;
    if (lx + width > w - right && lx > left) { lx = left; row += 1; }
    if (row >= MAX_ROWS) { cut += 1; continue; }
    legend.push([g, lx, row]); lx += width + 10;
  }
  const bottom = 36 + 14 * Math.min(MAX_ROWS, row + 1);
  let tmax = 0, ymin = 0, ymax = 0, points = 0;
  for (const [, s] of lines) {
    for (const [t, y] of s.pts) { tmax = Math.max(tmax, t); ymin = Math.min(ymin, y); ymax = Math.max(ymax, y); }
    points += s.pts.length;
  }
  for (const [t] of events) tmax = Math.max(tmax, t);
  tmax = tmax || 1;
  if (ymax === ymin) ymax = ymin + 1;
  const span = ymax - ymin; ymax += 0.1 * span; if (ymin < 0) ymin -= 0.1 * span;
  const X = (t) => left + (w - left - right) * t / tmax;
  const Y = (y) => (h - bottom) - (h - bottom - top) * (y - ymin) / (ymax - ymin);
  ctx.clearRect(0, 0, w, h);
  ctx.lineWidth = 1; ctx.textAlign = "left";
  ctx.strokeStyle = "#888"; ctx.fillStyle = "#333";
  ctx.beginPath(); ctx.moveTo(left, top); ctx.lineTo(left, h - bottom); ctx.lineTo(w - right, h - bottom); ctx.stroke();
  ctx.textAlign = "right";
  for (const y of new Set([ymin, ymin < 0 ? 0 : (ymin + ymax) / 2, ymax])) { // y ticks, in UNIT
    ctx.fillText(Number(y.toPrecision(3)).toString(), left - 4, Y(y) + 4);
    ctx.strokeStyle = "#eee"; ctx.beginPath(); ctx.moveTo(left + 1, Y(y)); ctx.lineTo(w - right, Y(y)); ctx.stroke();
  }
  ctx.save(); ctx.translate(12, (h - bottom + top) / 2); ctx.rotate(-Math.PI / 2);
  ctx.textAlign = "center"; ctx.fillText("[" + (unit || "1") + "]", 0, 0); ctx.restore();
  ctx.textAlign = "center";
  for (const t of [0, tmax / 2, tmax]) ctx.fillText(Number(t.toPrecision(3)).toString(), X(t), h - bottom + 14);
  ctx.fillText("time [s]", (left + w - right) / 2, h - bottom + 28);
  ctx.textAlign = "left";
  ctx.strokeStyle = "#bbb"; ctx.setLineDash([4, 4]);
  events.forEach(([t, label], k) => { // timeline events: dashed verticals, labelled
    ctx.beginPath(); ctx.moveTo(X(t), top); ctx.lineTo(X(t), h - bottom); ctx.stroke();
    ctx.fillStyle = "#777"; ctx.fillText(label, X(t) + 2, 24 + 12 * (k % 4));
  });
  for (const [, s] of lines) {
    ctx.strokeStyle = colourOf(s.group); ctx.setLineDash(s.dash ? [6, 3] : []); ctx.beginPath();
    s.pts.forEach(([t, y], k) => { if (k === 0) ctx.moveTo(X(t), Y(y)); else ctx.lineTo(X(t), Y(y)); });
    ctx.stroke();
  }
  ctx.setLineDash([]);
  for (const [g, x, r] of legend) {
    const y = h - bottom + 40 + 14 * r, colour = colourOf(g);
    ctx.strokeStyle = colour; ctx.beginPath(); ctx.moveTo(x, y - 4); ctx.lineTo(x + 16, y - 4); ctx.stroke();
    ctx.fillStyle = colour; ctx.fillText(g, x + 20, y);
  }
  if (cut) { ctx.fillStyle = "#777"; ctx.textAlign = "right"; ctx.fillText("+" + cut + " more", w - right, h - bottom + 28); }
  canvas.dataset.lines = lines.map(([name]) => name).join(",");
  canvas.dataset.points = String(points);
  return lines.length;
}

// The rebalance view: asks /api/runs for the runs of the address's scenario (every variant at
// one seed, faults added), draws their lanes on one time axis, and asks /api/instant for the
// state at the scrubbed instant. Nothing is computed here but pixels: owners, states, the
// comparison and the faults one can add all come from the API.
"use strict";

const VIEW_FIELDS = ["scenario", "toml", "seed", "variants", "faults", "window", "at"];
const DEFAULT_SCENARIO = "scale-out";
const MAX_URL = 8 * 1024;
const PLOT_WIDTH = 960;
const LABEL_WIDTH = 110;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const SVG_NS = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

// Colour per member: a fixed palette, then golden-angle hues.
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"];
function colour(i) {
  return i < PALETTE.length ? PALETTE[i] : `hsl(${(i * 137.5) % 360}, 55%, 45%)`;
}

// The page's state: the view's fields, the runs, the instant.
const page = { params: null, runs: null, at: 0, window: [0, 1], pending: null };

// Values are encoded as the API encodes them: `,` `=` `:` `@` `/` stay readable.
function enc(v) {
  return encodeURIComponent(v).replace(/%2C/g, ",").replace(/%3D/g, "=").replace(/%3A/g, ":")
    .replace(/%40/g, "@").replace(/%2F/g, "/");
}

// The address of the view: the runs' own query, then window and at.
function viewQuery(at, window) {
  let q = page.runs.query;
  if (window) q += `&window=${window[0]}..${window[1]}`;
  if (at !== null && at !== undefined) q += `&at=${at}`;
  return q;
}

function showError(err) {
  const field = err.field && document.getElementById("error-" + err.field) ? err.field : "general";
  if (field === "toml") document.getElementById("edit").open = true;
  document.getElementById("error-" + field).textContent = err.message;
  const input = document.getElementById(field);
  if (input && (input.tagName === "INPUT" || input.tagName === "SELECT" || input.tagName === "TEXTAREA")) {
    input.classList.add("bad");
  }
  document.getElementById("result").replaceChildren(
    el("p", { class: "status", id: "status" }, "No runs: " + err.message));
}

async function api(path) {
  const res = await fetch(path);
  const body = await res.json();
  if (!res.ok) throw body.error;
  return body;
}

// ---- The form ----

async function fillForm(params) {
  const select = document.getElementById("scenario");
  let list = [];
  try {
    list = (await api("/api/scenarios")).scenarios;
  } catch (e) { /* the folder is optional: edited text still runs */ }
  const chosen = params.get("scenario");
  for (const s of list) {
    select.append(el("option", { value: s.name, selected: s.name === chosen ? "" : null }, s.name));
  }
  if (params.has("toml")) select.prepend(el("option", { value: "", selected: "" }, "(edited)"));
  const describe = () => {
    const s = list.find(x => x.name === select.value);
    document.getElementById("scenario-description").textContent = s ? s.description : "";
  };
  select.addEventListener("change", describe);
  describe();
  const seed = document.getElementById("seed");
  seed.value = params.get("seed") || "";
  seed.setAttribute("value", seed.value);
}

function fillVariants(all, chosen) {
  const boxes = document.getElementById("variant-boxes");
  boxes.replaceChildren(...all.map(v => el("label", { class: "check" },
    el("input", { type: "checkbox", value: v, id: "variant-box-" + v, checked: chosen.includes(v) ? "" : null }), v)));
}

function chosenVariants() {
  return [...document.querySelectorAll("#variant-boxes input:checked")].map(b => b.value);
}

function submitForm(ev) {
  ev.preventDefault();
  const parts = [];
  const scenario = document.getElementById("scenario").value;
  if (scenario) parts.push("scenario=" + enc(scenario));
  else if (page.params.has("toml")) parts.push("toml=" + enc(page.params.get("toml")));
  const seed = document.getElementById("seed").value.trim();
  if (seed) parts.push("seed=" + enc(seed));
  const variants = chosenVariants();
  if (variants.length) parts.push("variants=" + enc(variants.join(",")));
  // A new scenario starts without the old one's faults.
  if (page.params.has("faults") && (!scenario || scenario === page.params.get("scenario"))) {
    parts.push("faults=" + enc(page.params.get("faults")));
  }
  location.href = "/rebalance?" + parts.join("&");
}

function runEdited() {
  const text = document.getElementById("toml").value;
  const parts = ["toml=" + enc(text)];
  const seed = document.getElementById("seed").value.trim();
  if (seed) parts.push("seed=" + enc(seed));
  const variants = chosenVariants();
  if (variants.length) parts.push("variants=" + enc(variants.join(",")));
  if (page.params.has("faults")) parts.push("faults=" + enc(page.params.get("faults")));
  const url = "/rebalance?" + parts.join("&");
  if (url.length > MAX_URL) {
    const note = document.getElementById("error-toml");
    note.textContent = `The edited scenario makes an address of ${url.length} bytes; the lab takes ` +
      `${MAX_URL}. Shorten it (comments too), or save it in scenarios/ and pick it by name.`;
    return;
  }
  location.href = url;
}

// ---- Time ----

function x(ms) {
  const [a, b] = page.window;
  return LABEL_WIDTH + (ms - a) / (b - a) * PLOT_WIDTH;
}

function msAt(px) {
  const [a, b] = page.window;
  return Math.round(a + (px - LABEL_WIDTH) / PLOT_WIDTH * (b - a));
}

// Tick spacing: 1, 2 or 5 times a power of ten, about 8 ticks to the window.
function ticks() {
  const [a, b] = page.window;
  const raw = (b - a) / 8;
  const pow = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
  const step = [1, 2, 5, 10].map(f => f * pow).find(s => s >= raw) || pow * 10;
  const out = [];
  for (let t = Math.ceil(a / step) * step; t <= b; t += step) out.push(t);
  return out;
}

function timeLabel(ms) {
  return ms >= 10000 ? `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s` : `${ms} ms`;
}

// ---- The lanes ----

function clipped(s, e) {
  const [a, b] = page.window;
  if (e < a || s > b) return null;
  return [Math.max(s, a), Math.min(e, b)];
}

function rect(s_ms, e_ms, y, h, attrs) {
  const c = clipped(s_ms, e_ms);
  if (!c) return null;
  const x0 = x(c[0]);
  const w = Math.max(x(c[1]) - x0, 0.8);
  return svg("rect", Object.assign({ x: x0.toFixed(2), y, width: w.toFixed(2), height: h }, attrs));
}

function lanes(run) {
  const L = run.lanes;
  const members = L.members.length;
  const rowP = L.partitions.length > 64 ? 3 : 7;
  const rowM = 10;
  let y = 0;
  const parts = [];
  const axisY = 14;
  // The time axis.
  for (const t of ticks()) {
    parts.push(svg("line", { x1: x(t), x2: x(t), y1: axisY - 3, y2: 9999, class: "tick" }));
    parts.push(svg("text", { x: x(t) + 2, y: axisY - 4, class: "tick-label" }, timeLabel(t)));
  }
  y = axisY + 2;
  // The coordinator's rebalances: join phase darker, sync lighter; KIP-848 reconciles.
  parts.push(svg("text", { x: 2, y: y + 10, class: "lane-label" }, "coordinator"));
  const windows = (run.formation ? [Object.assign({ generation: run.formation.generation, trigger: "formation" }, run.formation)] : [])
    .concat(run.rebalances);
  for (const r of windows) {
    const joinEnd = r.join_ms !== null && r.join_ms !== undefined ? r.start_ms + r.join_ms : r.end_ms;
    const title = `g${r.generation} ${r.trigger}${r.member ? " (" + r.member + ")" : ""}: ${r.start_ms}-${r.end_ms} ms`;
    for (const [s, e, cls] of [[r.start_ms, joinEnd, "phase-join"], [joinEnd, r.end_ms, "phase-sync"]]) {
      const b = rect(s, e, y, 12, { class: cls });
      if (b) { b.append(svg("title", {}, title)); parts.push(b); }
    }
    const c = clipped(r.start_ms, r.end_ms);
    if (c) parts.push(svg("text", { x: x(c[0]) + 2, y: y + 10, class: "phase-label" }, `g${r.generation}`));
  }
  y += 16;
  // Members: alive, paused, stalled, and their start, close and crash.
  L.members.forEach((m, mi) => {
    parts.push(svg("text", { x: 2, y: y + 8, class: "lane-label", fill: colour(mi) }, m.name));
    for (const [s, e] of m.alive) { const r = rect(s / 1000, e / 1000, y + 2, rowM - 4, { class: "alive" }); if (r) parts.push(r); }
    for (const [s, e] of m.paused) { const r = rect(s / 1000, e / 1000, y + 1, rowM - 2, { class: "paused" }); if (r) parts.push(r); }
    for (const [s, e] of m.stalled) { const r = rect(s / 1000, e / 1000, y + 1, rowM - 2, { class: "stalled" }); if (r) parts.push(r); }
    for (const [t, ev] of m.events) {
      const ms = t / 1000;
      if (!clipped(ms, ms)) continue;
      const mark = svg("text", { x: x(ms) - 3, y: y + 9, class: "event event-" + ev }, ev === "crash" ? "✕" : ev === "start" ? "▸" : ev === "close" ? "◂" : "·");
      mark.append(svg("title", {}, `${m.name} ${ev} at ${ms} ms`));
      parts.push(mark);
    }
    y += rowM;
  });
  y += 4;
  // Partitions: a row each, in the owner's colour; light while not processed, red when standing
  // still with no owner, outlined when processed by a member that does not own it.
  const top = y;
  L.partitions.forEach((p, pi) => {
    if (rowP >= 7) parts.push(svg("text", { x: 2, y: y + rowP - 1, class: "lane-label small" }, p.name));
    for (const [s, e, m, state] of p.segments) {
      const attrs = { class: "seg seg-" + state };
      if (m !== null) attrs.fill = colour(m);
      const r = rect(s / 1000, e / 1000, y, rowP - 1, attrs);
      if (r) {
        r.append(svg("title", {}, `${p.name}: ${state}${m !== null ? " " + L.members[m].name : ""}, ${s / 1000}-${e / 1000} ms`));
        parts.push(r);
      }
    }
    y += rowP;
  });
  if (rowP < 7) parts.push(svg("text", { x: 2, y: top + 10, class: "lane-label" }, `${L.partitions.length} partitions`));
  const height = y + 4;
  const cursor = svg("line", { class: "cursor", x1: x(page.at), x2: x(page.at), y1: 0, y2: height });
  parts.push(cursor);
  const s = svg("svg", {
    width: LABEL_WIDTH + PLOT_WIDTH + 10, height, class: "lanes",
    "data-variant": run.variant, role: "img",
    "aria-label": `${run.variant}: lanes from ${page.window[0]} to ${page.window[1]} ms`,
  }, ...parts);
  s.addEventListener("click", ev => {
    const box = s.getBoundingClientRect();
    const px = ev.clientX - box.left;
    if (px >= LABEL_WIDTH) scrub(Math.min(Math.max(msAt(px), page.window[0]), page.window[1]));
  });
  return s;
}

function rebalanceLinks(run) {
  const items = run.rebalances.map((r, i) => el("li", {},
    `g${r.generation} ${r.trigger}${r.member ? " (" + r.member + ")" : ""}, ${r.duration_ms} ms: `,
    scrubLink(`rebalance-${run.variant}-${i}-start`, r.start_ms, `start ${r.start_ms}`), " ",
    scrubLink(`rebalance-${run.variant}-${i}-end`, r.end_ms, `end ${r.end_ms}`)));
  return el("ul", { class: "rebalances", id: `rebalances-${run.variant}` },
    ...(items.length ? items : [el("li", {}, "no rebalance after the group formed")]));
}

// A link to the view at another instant (same window unless the instant is outside it).
function scrubLink(id, at, text) {
  let w = page.window;
  if (at < w[0] || at > w[1]) w = null;
  const a = el("a", { id, href: "/rebalance?" + viewQuery(at, w), "data-at": at }, text);
  a.addEventListener("click", ev => {
    if (w === null) return; // a new window: let the page load it
    ev.preventDefault();
    scrub(at);
  });
  return a;
}

function windowLink(id, w, text) {
  return el("a", { id, href: "/rebalance?" + viewQuery(Math.min(Math.max(page.at, w[0]), w[1]), w) }, text);
}

// ---- The page ----

function renderRuns() {
  const r = page.runs;
  const out = [];
  out.push(el("p", { class: "status", id: "status" }, "Running..."));
  const s = r.scenario;
  out.push(el("h2", {}, `${s.name}, seed ${s.seed}`, s.file ? "" : " (edited)"));
  if (s.description) out.push(el("p", { class: "description" }, s.description));

  // Faults added in the page.
  const faults = el("div", { id: "faults" },
    el("b", {}, r.faults.length ? "Faults added here: " : "No fault added yet (the buttons under the instant add one)."));
  // A fault the timeline cannot take (sent in the address) stays listed with why, and the run
  // goes on without it.
  r.faults.forEach((f, i) => faults.append(f.refused
    ? el("span", { class: "fault refused", id: `refused-fault-${i}` }, "not added: " + f.refused, " ",
      el("a", { id: `remove-fault-${i}`, href: "/rebalance?" + f.remove, title: "remove this fault" }, "remove"))
    : el("span", { class: "fault" }, f.text, " ",
      el("a", { id: `remove-fault-${i}`, href: "/rebalance?" + f.remove, title: "remove this fault" }, "remove"))));
  faults.append(" ", el("a", { id: "download-scenario", href: r.downloads.scenario, download: "" },
    r.faults.length || !s.file ? "Download the edited scenario (TOML)" : "Download the scenario (TOML)"));
  out.push(faults);

  // The scrubber and the window.
  const [a, b] = page.window;
  const range = el("input", { type: "range", id: "at-range", min: a, max: b, step: 1, value: page.at });
  range.addEventListener("input", () => scrub(Number(range.value)));
  const steps = [-1000, -100, -10, -1, 1, 10, 100, 1000].map(d => {
    const t = Math.min(Math.max(page.at + d, 0), s.duration_ms);
    return scrubLink(`step-${d < 0 ? "minus" : "plus"}-${Math.abs(d)}`, t, `${d < 0 ? "−" : "+"}${Math.abs(d) >= 1000 ? Math.abs(d) / 1000 + " s" : Math.abs(d) + " ms"}`);
  });
  const span = b - a;
  const zoomIn = [Math.max(0, Math.round(page.at - span / 8)), Math.min(s.duration_ms, Math.round(page.at + span / 8))];
  const zoomOut = [Math.max(0, Math.round(a - span)), Math.min(s.duration_ms, Math.round(b + span))];
  out.push(el("div", { id: "scrubber" },
    el("div", {}, el("b", {}, "Instant: "), el("span", { id: "at" }, page.at), " ms ", ...steps.flatMap(l => [l, " "])),
    range,
    el("div", { class: "zoom" }, `Window ${a}..${b} ms: `,
      windowLink("zoom-rebalances", r.rebalances_window_ms, "the rebalances"), " ",
      windowLink("zoom-run", [0, s.duration_ms], "the whole run"), " ",
      zoomIn[1] - zoomIn[0] >= 4 ? windowLink("zoom-in", zoomIn, "zoom in") : "", " ",
      windowLink("zoom-out", zoomOut, "zoom out"))));

  // The lanes, one time axis.
  const lanesDiv = el("div", { id: "timelines" });
  for (const run of r.variants) {
    const head = el("h3", { id: `title-${run.variant}` }, run.variant);
    if (run.error) {
      lanesDiv.append(head, el("p", { class: "error", id: `variant-error-${run.variant}` }, run.error));
      continue;
    }
    head.append(" ", el("span", { class: "badge" }, `digest ${run.digest.slice(0, 12)}`), " ",
      el("a", { id: `download-report-${run.variant}`, href: run.downloads.report, download: "" }, "report.json"), " ",
      el("a", { id: `download-trace-${run.variant}`, href: run.downloads.trace, download: "" }, "trace.json (Perfetto)"));
    lanesDiv.append(head, lanes(run), rebalanceLinks(run));
    if (run.violations) lanesDiv.append(el("p", { class: "error" }, `${run.violations} invariant violation(s): see report.json`));
    for (const e of run.errors) lanesDiv.append(el("p", { class: "error" }, `${e.member} at ${e.at_ms} ms: ${e.error}`));
  }
  out.push(lanesDiv);
  out.push(el("div", { class: "legend lanes-legend" },
    el("span", { class: "key processing" }, "owned and processed"), el("span", { class: "key stopped" }, "owned, not processed"),
    el("span", { class: "key unavailable" }, "no owner: stands still"), el("span", { class: "key zombie" }, "processed without owning (zombie)"),
    el("span", { class: "key paused" }, "member paused"), el("span", { class: "key stalled" }, "member stalled"),
    el("span", { class: "key join" }, "join phase"), el("span", { class: "key sync" }, "sync phase / reconcile")));

  out.push(el("div", { id: "instant" }, el("p", {}, "...")));
  out.push(el("div", { id: "actions" }));
  out.push(comparison(r));
  document.getElementById("result").replaceChildren(...out);
}

function comparison(r) {
  const c = r.comparison;
  const box = el("div", { id: "comparison" }, el("h3", {}, `The runs compared (cgsim compare, seed ${r.scenario.seed})`));
  if (!c) return box;
  const variants = Object.keys(c.variants);
  const head = el("tr", {}, el("th", {}, "figure"), ...variants.map(v => el("th", {}, v)));
  const rows = c.figures.map(f => el("tr", {}, el("td", {}, f.label), ...variants.map(v => {
    const cell = c.variants[v][f.key];
    const value = cell.median === null ? "-" : (typeof cell.median === "number" && !Number.isInteger(cell.median) ? (cell.median * 100).toFixed(1) + "%" : cell.median);
    const ratio = cell.ratio === null || v === c.baseline ? "" : ` x${cell.ratio.toFixed(2)}`;
    return el("td", {}, el("span", { id: `cmp-${v}-${f.key}` }, value), el("small", {}, ratio));
  })));
  box.append(el("table", { class: "counts comparison" }, el("thead", {}, head), el("tbody", {}, ...rows)));
  return box;
}

function renderInstant(data) {
  const cards = data.variants.map(v => {
    if (v.error) return el("div", { class: "card" }, el("h4", {}, v.variant), el("p", { class: "error" }, v.error));
    const s = v.state;
    const c = s.coordinator;
    const coord = [c.state];
    if (c.generation !== null) coord.push(c.protocol === "consumer" ? `group epoch ${c.generation}` : `generation ${c.generation}`);
    if (c.target_epoch !== null) coord.push(`target epoch ${c.target_epoch}`);
    coord.push(c.broker === null ? "no coordinator (its broker died)" : `on broker ${c.broker}${c.loading ? ", loading the group" : ""}`);
    if (c.leader) coord.push(`leader ${c.leader}`);
    const reb = s.rebalance
      ? `g${s.rebalance.generation} ${s.rebalance.trigger}${s.rebalance.member ? " (" + s.rebalance.member + ")" : ""}: ${s.rebalance.phase}, ${s.rebalance.start_ms}-${s.rebalance.end_ms} ms`
      : "none";
    const memberIndex = Object.fromEntries(s.members.map((m, i) => [m.name, i]));
    const rows = s.members.map(m => {
      const notes = [];
      if (m.paused) notes.push("paused");
      if (m.stalled_until_ms !== null) notes.push(`stalled until ${m.stalled_until_ms} ms`);
      if (m.rejoin) notes.push("rejoin: " + m.rejoin);
      if (m.error) notes.push(m.error);
      if (!m.in_group && m.process !== "not started") notes.push("not in the group");
      return el("tr", { class: m.process === "running" || m.process === "stalled" ? "" : "down" },
        el("td", { style: `color:${colour(memberIndex[m.name])}` }, m.name),
        el("td", { id: `process-${v.variant}-${m.name}` }, m.process),
        el("td", { id: `state-${v.variant}-${m.name}` }, m.state || "-"),
        el("td", { id: `generation-${v.variant}-${m.name}` }, m.generation === null ? "-" : m.generation),
        el("td", { id: `owns-${v.variant}-${m.name}`, title: m.owned.join(" ") }, m.owned.length),
        el("td", { id: `processes-${v.variant}-${m.name}`, title: m.processing.join(" ") }, m.processing.length),
        el("td", { class: "notes" }, notes.join("; ")));
    });
    const members = el("table", { class: "counts members" },
      el("thead", {}, el("tr", {}, ...["member", "process", "state", "gen/epoch", "owns", "processes", ""].map(h => el("th", {}, h)))),
      el("tbody", {}, ...rows));
    const cells = s.partitions.map(p => {
      const who = p.owner !== null ? p.owner : (p.processed_by !== null ? p.processed_by : null);
      const style = who !== null ? `background:${colour(memberIndex[who])}` : null;
      const title = `${p.name}: ${p.state}` + (p.owner !== null ? `, owner ${p.owner}` : "") +
        (p.processed_by !== null && p.processed_by !== p.owner ? `, processed by ${p.processed_by}` : "");
      return el("div", { class: "part state-" + p.state, title },
        el("span", { class: "pname" }, p.name),
        el("span", { class: "owner", id: `owner-${v.variant}-${p.name}`, style }, p.owner === null ? "-" : p.owner));
    });
    const brokers = s.brokers.map(b => `${b.id}${b.up ? "" : " (down)"}${b.coordinator ? " (coordinator)" : ""}`).join(", ");
    return el("div", { class: "card", id: `card-${v.variant}` },
      el("h4", {}, `${v.variant} at ${s.at_ms} ms`),
      el("div", {}, el("b", {}, "Coordinator: "), el("span", { id: `coordinator-${v.variant}` }, coord.join(", "))),
      el("div", {}, el("b", {}, "Rebalance: "), el("span", { id: `rebalance-now-${v.variant}` }, reb)),
      el("div", { class: "small" }, `Brokers: ${brokers}`),
      members, el("div", { class: "parts" }, ...cells));
  });
  const instant = el("div", { id: "instant" }, el("h3", {}, `At ${data.at_ms} ms: who owns what`), el("div", { class: "cards" }, ...cards));
  document.getElementById("instant").replaceWith(instant);

  // The faults one can add here, each a link to the view with it added.
  const byTarget = new Map();
  for (const a of data.actions) {
    const group = ["crash", "leave", "stall", "network_partition", "restart"].includes(a.kind) ? a.target
      : a.kind.startsWith("broker") ? "brokers" : a.kind === "join" ? "the group" : "the network";
    if (!byTarget.has(group)) byTarget.set(group, []);
    byTarget.get(group).push(el("a", { class: "action", id: `action-${a.id}${a.kind === "stall" && a.label.includes("past") ? "-long" : ""}`, href: "/rebalance?" + a.query, title: a.text }, a.label));
  }
  const rows = [...byTarget.entries()].map(([t, links]) => el("tr", {}, el("td", {}, t), el("td", {}, ...links.flatMap(l => [l, " "]))));
  const actions = el("div", { id: "actions" },
    el("h3", {}, `Add a fault at ${data.at_ms} ms and run again`),
    rows.length ? el("table", { class: "counts actions" }, el("tbody", {}, ...rows)) : el("p", {}, "(the run ends here)"));
  document.getElementById("actions").replaceWith(actions);
}

// Shows the state at `at`: the cursor moves at once, the state when the API answers (the
// last asked wins).
async function scrub(at) {
  page.at = at;
  document.getElementById("at").textContent = at;
  document.getElementById("at-range").value = at;
  for (const line of document.querySelectorAll("line.cursor")) {
    line.setAttribute("x1", x(at));
    line.setAttribute("x2", x(at));
  }
  history.replaceState(null, "", "/rebalance?" + viewQuery(at, page.params.has("window") ? page.window : null));
  const ticket = {};
  page.pending = ticket;
  try {
    const data = await api("/api/instant?" + viewQuery(at, null));
    if (page.pending !== ticket) return;
    renderInstant(data);
    refreshSteps();
    document.getElementById("status").textContent =
      `Shown: ${page.runs.variants.length} run(s) at ${data.at_ms} ms`;
  } catch (e) {
    if (page.pending === ticket) showError(e);
  }
}

// The step links follow the instant.
function refreshSteps() {
  for (const d of [-1000, -100, -10, -1, 1, 10, 100, 1000]) {
    const a = document.getElementById(`step-${d < 0 ? "minus" : "plus"}-${Math.abs(d)}`);
    const t = Math.min(Math.max(page.at + d, 0), page.runs.scenario.duration_ms);
    const fresh = scrubLink(a.id, t, a.textContent);
    a.replaceWith(fresh);
  }
}

async function main() {
  document.getElementById("view").addEventListener("submit", submitForm);
  document.getElementById("run-edited").addEventListener("click", runEdited);
  let query = location.search.replace(/^\?/, "");
  const params = new URLSearchParams(query);
  if (!params.has("scenario") && !params.has("toml")) {
    params.set("scenario", DEFAULT_SCENARIO);
    query = "scenario=" + DEFAULT_SCENARIO + (query ? "&" + query : "");
  }
  page.params = params;
  await fillForm(params);
  try {
    page.runs = await api("/api/runs?" + query);
  } catch (e) {
    fillVariants(["eager", "cooperative", "consumer"], (params.get("variants") || "eager,cooperative,consumer").split(","));
    return showError(e);
  }
  const r = page.runs;
  fillVariants(r.scenario.variants, r.variants.map(v => v.variant));
  const toml = document.getElementById("toml");
  toml.value = r.scenario.text;
  if (!params.get("seed")) {
    const seed = document.getElementById("seed");
    seed.value = r.scenario.seed;
    seed.setAttribute("value", seed.value);
  }
  page.window = r.window_ms;
  page.at = r.at_ms;
  renderRuns();
  await scrub(page.at);
}

main();

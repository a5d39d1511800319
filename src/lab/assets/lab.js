// The lab page: copies the address's fields into the form, asks /api/table for the view and
// draws what it returns. No assignment is computed here: every number comes from the API.
"use strict";

const FIELDS = ["topics", "members", "member-ids", "static-ids", "subscriptions", "joins", "topic-ids"];
const DEFAULT_QUERY = "topics=t3a%3D3,t3b%3D3,t3c%3D3&members=2,3,4&joins=2%3Done-by-one";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

// Colour per topic: a fixed palette, then golden-angle hues.
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
function colour(i) {
  return i < PALETTE.length ? PALETTE[i] : `hsl(${(i * 137.5) % 360}, 55%, 45%)`;
}

function fillForm(params) {
  for (const f of FIELDS) {
    const input = document.getElementById(f);
    const v = params.get(f) || "";
    input.value = v;
    input.setAttribute("value", v);
  }
  const joins = params.get("joins") || "all";
  const mode = document.getElementById("joins-mode");
  mode.value = joins === "all" || joins === "one-by-one" ? joins : "explicit";
  syncJoins();
}

function syncJoins() {
  const mode = document.getElementById("joins-mode");
  const joins = document.getElementById("joins");
  if (mode.value !== "explicit") joins.value = mode.value;
  joins.hidden = mode.value !== "explicit";
}

function showError(err) {
  const field = err.field && document.getElementById("error-" + err.field) ? err.field : "general";
  document.getElementById("error-" + field).textContent = err.message;
  const input = document.getElementById(field);
  if (input && input.tagName === "INPUT") input.classList.add("bad");
  const result = document.getElementById("result");
  result.replaceChildren(el("p", { class: "status", id: "status" }, "No view: " + err.message));
}

function countsTable(s, g, gi, group) {
  const head = el("tr", {}, el("th", {}, "member"), ...group.assignors.map(a => el("th", {}, a.name)));
  const rows = group.members.map((m, mi) =>
    el("tr", {}, el("td", {}, m.member_id),
      ...group.assignors.map(a => el("td", { id: `count-${s}-${gi}-${a.name}-${mi}` }, a.counts[mi]))));
  const idle = el("tr", { class: "summary" }, el("td", {}, "idle members"),
    ...group.assignors.map(a => el("td", { id: `idle-${s}-${gi}-${a.name}` }, a.idle)));
  const runs = el("tr", {}, el("td", {}, "rebalances"),
    ...group.assignors.map(a => el("td", { id: `rebalances-${s}-${gi}-${a.name}` }, a.rebalances)));
  return el("table", { class: "counts", id: `counts-${s}-${gi}` }, el("thead", {}, head), el("tbody", {}, ...rows, idle, runs));
}

function grid(s, gi, section, group, a) {
  const topicHead = el("tr", {}, el("th", { class: "member" }, ""));
  const partHead = el("tr", {}, el("th", { class: "member" }, "member"));
  section.topics.forEach((t, ti) => {
    topicHead.append(el("th", { colspan: t.partitions, style: `color:${colour(ti)}` }, t.partitions > 1 ? t.name : t.name.slice(0, 3)));
    for (let p = 0; p < t.partitions; p++) partHead.append(el("th", {}, p));
  });
  topicHead.append(el("th", {}, ""));
  partHead.append(el("th", { class: "count" }, "#"));
  const rows = group.members.map((m, mi) => {
    const owned = a.assignment[mi];
    const idle = a.counts[mi] === 0;
    const name = el("td", { class: "member", title: m.member_id }, m.member_id);
    if (m.group_instance_id) name.append(el("span", { class: "badge" }, "static " + m.group_instance_id));
    if (m.topics.length !== section.topics.length) name.append(el("span", { class: "badge" }, m.topics.join("+")));
    if (idle) name.append(el("span", { class: "badge idle" }, "idle"));
    const tr = el("tr", { class: idle ? "idle" : null }, name);
    section.topics.forEach((t, ti) => {
      const mine = new Set(owned[t.name] || []);
      for (let p = 0; p < t.partitions; p++) {
        const on = mine.has(p);
        tr.append(el("td", { class: "cell", title: `${t.name}-${p}`, style: on ? `background:${colour(ti)}` : null }, ""));
      }
    });
    tr.append(el("td", { class: "count" }, a.counts[mi]));
    return tr;
  });
  return el("table", { class: "grid" }, el("thead", {}, topicHead, partHead), el("tbody", {}, ...rows));
}

function coLocation(s, gi, a) {
  return a.co_location.map((c, ci) => {
    const owners = c.owners.map((o, p) => o === null ? el("span", { class: "split" }, `${p}:split `) : `${p}:${o} `);
    return el("div", { class: "coloc" },
      `${c.topics.join(" + ")}: `,
      el("b", { id: `coloc-${s}-${gi}-${a.name}-${ci}` }, `${c.co_located}/${c.indexes}`),
      " indexes co-located ", el("br"), ...owners);
  });
}

function render(view) {
  const out = [];
  view.sections.forEach((section, s) => {
    out.push(el("h2", {}, section.label));
    out.push(el("div", { class: "legend" }, ...section.topics.map((t, ti) =>
      el("span", { style: `background:${colour(ti)}` }, `${t.name} (${t.partitions})`))));
    if (view.preset) out.push(el("p", {}, el("a", { id: `edit-${s}`, href: "/?" + section.query }, "edit this table")));
    section.groups.forEach((group, gi) => {
      const n = group.members.length;
      out.push(el("h3", {}, `${n} member${n === 1 ? "" : "s"}, ${group.history}`));
      out.push(countsTable(s, section, gi, group));
      out.push(el("div", { class: "cards" }, ...group.assignors.map(a =>
        el("div", { class: "card", id: `card-${s}-${gi}-${a.name}` },
          el("h4", {}, `${a.name} `, el("span", { class: "badge" }, `${a.side === "server" ? "KIP-848 server-side" : a.protocol}, ${a.rebalances} rebalance${a.rebalances === 1 ? "" : "s"}`),
            a.idle ? el("span", { class: "badge idle" }, `${a.idle} idle`) : ""),
          grid(s, gi, section, group, a), ...coLocation(s, gi, a)))));
    });
  });
  const result = document.getElementById("result");
  result.replaceChildren(el("p", { class: "status", id: "status" }, "Shown: " + view.sections.length + " table(s)"), ...out);
}

async function main() {
  document.getElementById("joins-mode").addEventListener("change", syncJoins);
  // Blank fields stay out of the address, so a shared link is short.
  document.getElementById("view").addEventListener("submit", ev => {
    ev.preventDefault();
    syncJoins();
    const params = new URLSearchParams();
    for (const f of FIELDS) {
      const v = document.getElementById(f).value.trim();
      if (v && !(f === "joins" && v === "all")) params.set(f, v);
    }
    location.search = params.toString();
  });
  let query = location.search.replace(/^\?/, "");
  if (!query) query = DEFAULT_QUERY;
  const params = new URLSearchParams(query);
  fillForm(params);
  try {
    const res = await fetch("/api/table?" + query);
    const body = await res.json();
    if (!res.ok) return showError(body.error);
    render(body);
  } catch (e) {
    showError({ field: null, message: "the lab did not answer: " + e });
  }
}

main();

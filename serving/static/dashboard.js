// livekg dashboard: live alerts (SSE), ask box, yields/spreads and sentiment charts
// (uPlot), latest bond report, neighbourhood graph (cytoscape). No external requests.
"use strict";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
let apiKey = params.get("key") || localStorage.getItem("livekg-key") || "";
$("apikey").value = apiKey;
$("apikey").addEventListener("change", (e) => {
  apiKey = e.target.value; localStorage.setItem("livekg-key", apiKey); connectAlerts(); refreshAll();
});
const hdrs = () => (apiKey ? {"X-API-Key": apiKey} : {});
async function api(path, opts = {}) {
  const r = await fetch(path, {...opts, headers: {...hdrs(), ...(opts.headers || {})}});
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error((body.error && body.error.message) || r.statusText);
  return body;
}
const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));

// -- alerts (server-sent events; the browser resends Last-Event-ID on reconnect) ----------
let source = null;
const MAX_ALERTS = 200;
function connectAlerts() {
  if (source) source.close();
  const q = apiKey ? `?api_key=${encodeURIComponent(apiKey)}` : "";
  source = new EventSource(`/alerts/stream${q}`);
  source.onopen = () => { $("alerts-state").textContent = "live"; $("alerts-state").className = "pill ok"; };
  source.onerror = () => { $("alerts-state").textContent = "reconnecting"; $("alerts-state").className = "pill err"; };
  source.addEventListener("alert", (ev) => addAlert(JSON.parse(ev.data)));
}
function addAlert(a) {
  const li = document.createElement("li");
  li.className = a.severity || "info";
  li.dataset.entity = a.entity_id || "";
  if (a.subscription_id) li.dataset.subscription = a.subscription_id;
  const when = a.event_time ? new Date(a.event_time).toLocaleString() : "";
  li.innerHTML = `<div>${esc(a.message)}</div>
    <div class="meta">${esc(a.severity)} · ${esc(a.kind)} · ${esc(a.entity_id)} · ${esc(when)}</div>
    <pre>${esc(JSON.stringify(a.evidence || {}, null, 1))}</pre>`;
  li.addEventListener("click", () => li.classList.toggle("open"));
  const list = $("alerts");
  list.insertBefore(li, list.firstChild);
  while (list.children.length > MAX_ALERTS) list.removeChild(list.lastChild);
}

// -- ask --------------------------------------------------------------------------------
$("ask-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  $("answer").textContent = "…";
  try {
    const r = await api("/ask", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({question})});
    // the reading the answer executed (issue 44), above the answer and rows
    let reading = $("reading");
    if (!reading) { reading = document.createElement("div"); reading.id = "reading"; $("answer").before(reading); }
    const it = r.interpretation;
    const picks = r.abstention ? r.abstention.choices.map((c, k) => `\n  ${k + 1}. ${c.text}`).join("") : "";
    reading.textContent = it ? `${r.status === "abstained" ? "Not answered" : "Read as"}: ${it.text} (confidence ${it.confidence.toFixed(2)})${picks}` : "";
    reading.style.whiteSpace = "pre-line";
    $("answer").textContent = r.answer;
    $("answer").dataset.method = r.method;
    $("cypher").textContent = r.cypher ? `${r.cypher}\n\nparams: ${JSON.stringify(r.params)}` : "(none)";
    const t = $("rows"); t.innerHTML = "";
    if (r.rows.length) {
      const cols = Object.keys(r.rows[0]);
      t.insertRow().innerHTML = cols.map((c) => `<th>${esc(c)}</th>`).join("");
      for (const row of r.rows.slice(0, 50)) t.insertRow().innerHTML = cols.map((c) => `<td>${esc(row[c])}</td>`).join("");
    }
  } catch (err) { $("answer").textContent = `error: ${err.message}`; }
});

// -- charts -----------------------------------------------------------------------------
const charts = {};
function drawChart(id, title, xs, seriesList) {
  const el = $(id);
  if (charts[id]) { charts[id].destroy(); delete charts[id]; }
  if (!xs.length) { el.textContent = "no data yet"; return; }
  el.textContent = "";
  const colors = ["#4f9cff", "#ffb74d", "#8be28b", "#ff8a80", "#c792ea"];
  const opts = {
    title, width: Math.max(300, el.clientWidth || 500), height: 220,
    series: [{}, ...seriesList.map((s, i) => ({label: s.label, stroke: colors[i % colors.length], spanGaps: true}))],
    axes: [{stroke: "#9aa5b1"}, {stroke: "#9aa5b1"}],
  };
  charts[id] = new uPlot(opts, [xs, ...seriesList.map((s) => s.values)], el);
}
function align(seriesById) {
  const xs = [...new Set(Object.values(seriesById).flatMap((pts) => pts.map((p) => p.t)))].sort((a, b) => a - b);
  const cols = {};
  for (const [id, pts] of Object.entries(seriesById)) {
    const m = new Map(pts.map((p) => [p.t, p.value]));
    cols[id] = xs.map((x) => (m.has(x) ? m.get(x) : null));
  }
  return {xs: xs.map((x) => x / 1000), cols};
}
async function refreshYields() {
  const ids = ["CN10Y", "US10Y", "US2Y"];
  const got = {};
  for (const id of ids) {
    try { got[id] = (await api(`/indicators/${id}/series?limit=500`)).points; } catch { got[id] = []; }
  }
  const {xs, cols} = align(got);
  const carry = (arr) => { let prev = null; return arr.map((v) => (prev = v ?? prev)); };
  const us10 = carry(cols.US10Y), us2 = carry(cols.US2Y);
  const spread = us10.map((v, i) => (v != null && us2[i] != null ? +(100 * (v - us2[i])).toFixed(1) : null));
  drawChart("yields-chart", "yields (%) and US 10Y-2Y spread (bp/100)", xs, [
    ...ids.map((id) => ({label: id, values: cols[id]})),
    {label: "US 10Y-2Y (bp/100)", values: spread.map((v) => (v == null ? null : v / 100))},
  ]);
}
// the list follows the data (the entities with the most scores) until the user edits it
let sentAuto = !$("sent-entities").value.trim();
async function refreshSentiment() {
  if (sentAuto) {
    try {
      const top = (await api("/sentiment/entities?limit=4")).entities.map((x) => x.entity);
      if (top.length) $("sent-entities").value = top.join(",");
    } catch { /* keep the list shown */ }
  }
  const ents = $("sent-entities").value.split(",").map((s) => s.trim()).filter(Boolean).slice(0, 5);
  const got = {};
  for (const e of ents) {
    try { got[e] = (await api(`/sentiment?entity=${encodeURIComponent(e)}`)).points.map((p) => ({t: p.t, value: p.score})); } catch { got[e] = []; }
  }
  const {xs, cols} = align(got);
  drawChart("sentiment-chart", "document sentiment (-1..1)", xs, ents.map((e) => ({label: e, values: cols[e]})));
}
$("sent-entities").addEventListener("change", () => { sentAuto = !$("sent-entities").value.trim(); refreshSentiment(); });

// -- report -----------------------------------------------------------------------------
async function refreshReport() {
  try {
    const r = await api("/reports/latest?empty_ok=true");
    if (!r.headline && !r.text) { $("report").textContent = "no report yet"; return; }
    const q = apiKey ? `?api_key=${encodeURIComponent(apiKey)}&t=${Date.now()}` : `?t=${Date.now()}`;
    const chart = r.chart_url ? `<img alt="report chart" src="${r.chart_url}${q}" style="max-width:100%">` : "";
    const day = r.as_of ? `<span class="pill">market day ${esc(r.as_of)}</span>` : `<span class="pill">${esc(r.at || "")}</span>`;
    const syn = (r.synthetic || []).length ? `<div class="meta">synthetic inputs: ${esc(r.synthetic.join(", "))}</div>` : "";
    const head = (r.headline || []).map((h) =>
      `<li>${esc(h.indicator)}${h.synthetic ? " (synthetic)" : ""} ${h.change_bp >= 0 ? "+" : ""}${h.change_bp.toFixed(1)} bp to ${h.level.toFixed(2)}% (${h.z >= 0 ? "+" : ""}${h.z.toFixed(1)} sigma)</li>`).join("");
    const fmt = (v) => (v == null ? "-" : (v >= 0 ? "+" : "") + v.toFixed(1));
    const table = (t) => (!t || !t.rows.length) ? "" :
      `<table id="report-${t.id}"><caption>${esc(t.title)}</caption><tr><th>tenor</th><th>level %</th><th>1d bp</th><th>1w bp</th><th>1m bp</th></tr>` +
      t.rows.filter((x) => x.level != null).map((x) => `<tr><td>${esc(x.label)}${x.synthetic ? "*" : ""}</td><td>${x.level.toFixed(2)}</td><td>${fmt(x.changes["1d"])}</td><td>${fmt(x.changes["1w"])}</td><td>${fmt(x.changes["1m"])}</td></tr>`).join("") + "</table>";
    const tabs = r.tables || {};
    const concl = (r.conclusions || []).filter((c) => c.show).map((c) => `<li>${esc(c.text)} <span class="meta">[${esc(Object.keys(c.signals).join(", "))}]</span></li>`).join("");
    const note = r.model_note ? `<div class="meta">${esc(r.model_note)}</div>` : "";
    $("report").innerHTML = `<div>${day}</div>${syn}<h3>Headline</h3><ol id="report-headline">${head}</ol>${chart}` +
      `<div class="grid">${table(tabs.curve)}${table(tabs.funding)}</div><h3>Conclusions</h3><ul id="report-conclusions">${concl}</ul>${note}` +
      `<details><summary>Full report</summary><pre>${esc(r.text || r.answer || "")}</pre></details>`;
  } catch (err) { $("report").textContent = String(err.message || err); }
}

// -- neighbourhood graph ----------------------------------------------------------------
let cy = null;
async function refreshGraph() {
  const id = $("entity").value.trim();
  if (!id) return;
  try {
    const g = await api(`/entities/${encodeURIComponent(id)}/neighbourhood?depth=${$("depth").value}`);
    const elements = [
      ...g.nodes.map((n) => ({data: {id: n.id, label: n.name || n.id, kind: n.label || ""}})),
      ...g.edges.map((e, i) => ({data: {id: `e${i}`, source: e.source, target: e.target, label: e.type}})),
    ];
    if (cy) cy.destroy();
    cy = cytoscape({
      container: $("graph"), elements, layout: {name: "cose", animate: false},
      style: [
        {selector: "node", style: {label: "data(label)", color: "#e6e6e6", "font-size": 9, "background-color": "#4f9cff", width: 12, height: 12}},
        {selector: `node[id = "${id.replace(/"/g, "")}"]`, style: {"background-color": "#ffb74d", width: 18, height: 18}},
        {selector: "edge", style: {label: "data(label)", "font-size": 7, color: "#9aa5b1", width: 1, "line-color": "#5c6b7a", "target-arrow-shape": "triangle", "target-arrow-color": "#5c6b7a", "curve-style": "bezier"}},
      ],
    });
    cy.on("tap", "node", (ev) => { $("entity").value = ev.target.id(); refreshGraph(); });
  } catch (err) { $("graph").textContent = String(err.message || err); }
}
$("entity").addEventListener("change", refreshGraph);
$("depth").addEventListener("change", refreshGraph);

// -- status -----------------------------------------------------------------------------
function fill(id, obj, fmt) {
  const t = $(id); t.innerHTML = "";
  for (const [k, v] of Object.entries(obj || {}).sort()) {
    const tr = t.insertRow(); tr.insertCell().textContent = k;
    const c = tr.insertCell(); c.innerHTML = fmt ? fmt(v) : esc(v);
  }
}
async function refreshStatus() {
  try {
    const s = await api("/api/status");
    $("health").innerHTML = s.error ? `<span class=err>${esc(s.error)}</span>` : "<span class=ok>live</span>";
    fill("topics", s.topics); fill("nodes", s.graph && s.graph.nodes);
    fill("services", s.services, (v) => (v.alive ? "<span class=ok>up</span>" : "<span class=err>down</span>"));
  } catch (err) { $("health").innerHTML = `<span class=err>${esc(err.message)}</span>`; }
}

function refreshAll() { refreshStatus(); refreshYields(); refreshSentiment(); refreshReport(); refreshGraph(); }
connectAlerts();
refreshAll();
setInterval(refreshStatus, 5000);
setInterval(() => { refreshYields(); refreshSentiment(); refreshReport(); }, 30000);

// livekg dashboard: the subscriptions panel (add, list, remove, last fired). Uses the
// helpers of dashboard.js ($, api, esc); fired alerts arrive in the live alerts feed.
"use strict";

async function refreshSubscriptions() {
  const t = $("subs");
  try {
    const subs = await api("/subscriptions");
    t.innerHTML = "<tr><th>name</th><th>condition</th><th>last fired</th><th></th></tr>";
    for (const s of subs) {
      const row = t.insertRow();
      row.dataset.id = s.id;
      const fired = s.last_fired_at ? new Date(s.last_fired_at).toLocaleString() : "never";
      row.innerHTML = `<td title="${esc(s.cypher)}">${esc(s.name)}</td><td>${esc(s.condition.kind)}</td>
        <td class="fired">${esc(fired)}</td><td><button class="sub-remove">remove</button></td>`;
      row.querySelector("button").addEventListener("click", async () => {
        try { await api(`/subscriptions/${encodeURIComponent(s.id)}`, {method: "DELETE"}); }
        catch (err) { $("sub-status").textContent = `error: ${err.message}`; }
        refreshSubscriptions();
      });
    }
  } catch (err) { $("sub-status").textContent = `error: ${err.message}`; }
}

$("sub-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = $("sub-query").value.trim();
  if (!text) return;
  const body = {name: $("sub-name").value.trim() || text.slice(0, 60)};
  body[$("sub-kind").value] = text;
  try {
    const params = $("sub-params").value.trim();
    if (params) body.params = JSON.parse(params);
    const opts = $("sub-options").value.trim();
    body.condition = {kind: $("sub-condition").value, ...(opts ? JSON.parse(opts) : {})};
    const hook = $("sub-webhook").value.trim();
    if (hook) body.webhook = hook;
    $("sub-status").textContent = "…";
    const s = await api("/subscriptions", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
    $("sub-status").textContent = `registered ${s.id}`;
    $("sub-status").dataset.id = s.id;
  } catch (err) { $("sub-status").textContent = `error: ${err.message}`; }
  refreshSubscriptions();
});

$("apikey").addEventListener("change", refreshSubscriptions);
refreshSubscriptions();
setInterval(refreshSubscriptions, 5000);

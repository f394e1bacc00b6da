// The admin page: the accounts (add, change role, disable, reset a password; a made password is shown
// once), how long each kind of data is kept, and the audit log, filtered and exported. Text goes in as
// text (never as HTML).
"use strict";

async function change(name, body) {
  const response = await send(`api/users/${encodeURIComponent(name)}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const answer = response.ok ? await response.json() : null;
  say(answer ? (answer.password ? `New password of ${name}: ${answer.password}` : `${name} changed.`) : await response.text());
  showUsers();
}

async function showUsers() {
  const response = await fetch("api/users");
  if (!response.ok) return;
  const rows = document.querySelector("#users tbody");
  rows.replaceChildren();
  for (const user of (await response.json()).users) {
    const tr = element("tr");
    tr.dataset.user = user.name;
    const role = element("select", "role");
    for (const name of ROLES) role.append(element("option", "", name));
    role.value = user.role;
    role.addEventListener("change", () => change(user.name, { role: role.value }));
    const access = element("button", "access", user.disabled ? "Enable" : "Disable");
    access.addEventListener("click", () => change(user.name, { disabled: !user.disabled }));
    const reset = element("button", "reset", "New password");
    reset.addEventListener("click", () => change(user.name, { reset_password: true }));
    const roleCell = element("td");
    roleCell.append(role);
    const actions = element("td");
    actions.append(access, reset);
    tr.append(element("td", "name", user.name), roleCell,
              element("td", "", `${user.disabled ? "disabled" : "enabled"}${user.api_token ? " · API token" : ""}`), actions);
    rows.append(tr);
  }
}

async function showAudit(event) {
  if (event) event.preventDefault();
  const form = new FormData(document.getElementById("audit-filter"));
  const params = new URLSearchParams({ limit: "200" });
  for (const key of ["who", "kind"]) if (form.get(key)) params.set(key, form.get(key).trim());
  const response = await fetch(`api/audit?${params}`);
  if (!response.ok) return;
  const rows = document.querySelector("#audit tbody");
  rows.replaceChildren();
  for (const entry of (await response.json()).entries) {
    const tr = element("tr");
    tr.dataset.kind = entry.kind;
    for (const text of [when(entry.at_ms), entry.who, entry.address || "", entry.kind, entry.subject, String(entry.results)]) {
      tr.append(element("td", "", text));
    }
    rows.append(tr);
  }
}

async function showRetention() {
  const response = await fetch("api/retention");
  if (!response.ok) return;
  const kept = await response.json();
  const rows = document.querySelector("#retention tbody");
  rows.replaceChildren();
  for (const row of [...kept.database, ...kept.kafka]) {
    const tr = element("tr");
    tr.dataset.kind = row.kind;
    const days = row.days === null ? "forever" : typeof row.days === "number" ? row.days.toFixed(2).replace(/\.?0+$/, "") : row.days;
    const removed = row.removed === undefined ? "" : `${row.removed}, ${row.removed_total}`;
    for (const text of [row.kind, row.place, days, row.applied_by, row.applied_ms ? when(row.applied_ms) : "", removed]) {
      tr.append(element("td", "", String(text)));
    }
    rows.append(tr);
  }
}

document.getElementById("add").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const response = await send("api/users", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name: form.get("name").trim(), role: form.get("role") }),
  });
  say(response.ok ? (({ name, password }) => `Added ${name}; password (shown once): ${password}`)(await response.json())
    : await response.text());
  event.target.reset();
  showUsers();
  showAudit();
});
document.getElementById("audit-filter").addEventListener("submit", showAudit);
showUsers();
showRetention();
showAudit();

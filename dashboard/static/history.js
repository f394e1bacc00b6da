// The history: the alert store's alerts under the form's filters, newest first, a page at a time
// (the API's cursor), each with its life and snapshot; selected ones marked reviewed. Text goes in as
// text (never as HTML).
"use strict";

let cursors = [null];  // the cursor of each page shown so far; the last one is the page on screen
let kinds = {};  // name -> the kind's row (GET api/kinds): its title, whether its alerts have pictures

function query(before) {
  const form = new FormData(document.getElementById("filters"));
  const params = new URLSearchParams();
  for (const name of ["camera", "kind", "state", "reviewed"]) {
    if (form.get(name)) params.set(name, form.get(name));
  }
  for (const name of ["since", "until"]) {
    if (form.get(name)) params.set(name, String(new Date(form.get(name)).getTime()));
  }
  if (before) params.set("before", before);
  const linked = new URLSearchParams(location.search).get("alert");  // a notification's link to one alert
  if (linked) params.set("alert", linked);
  return params;
}

// The alert's frames as a clip in place of its snapshot, while Kafka still holds them; else it says so
// and the snapshot stays.
function clipButton(alert, li) {
  const button = element("button", "clip", "Clip");
  button.type = "button";
  button.addEventListener("click", () => {
    const picture = li.querySelector("img, .noevidence");
    const video = element("video", "clip");
    Object.assign(video, { controls: true, autoplay: true, muted: true, playsInline: true });
    video.src = `clips/${encodeURIComponent(alert.alert_id)}.mp4`;
    video.addEventListener("error", () => {
      video.replaceWith(picture);
      button.replaceWith(element("span", "clip-gone", "frames no longer in Kafka: the snapshot stays"));
    });
    picture.replaceWith(video);
    button.disabled = true;
  });
  return button;
}

let traces = false;  // the role identity (or above) may follow a journey
may("identity").then((ok) => {
  traces = ok;
  if (ok) show(cursors[cursors.length - 1]);  // the page again, with its journey links
});
may("reviewer").then((ok) => { document.querySelector(".actions .reviewing").hidden = !ok; });

// The alert's life in short, and each of its records with its time a click away.
function life(alert) {
  const runs = runsOf(alert.lifecycle);
  if (runs.length === alert.lifecycle.length) return element("div", "lifecycle", lifecycle(runs));
  const shown = element("details", "lifecycle");
  const whole = alert.lifecycle.map((state, i) => `${state} ${clock(alert.lifecycle_ts_ms[i])}`);
  shown.append(element("summary", "", lifecycle(runs)), element("div", "whole", whole.join(" → ")));
  return shown;
}

function item(alert) {
  const li = element("li", "alert");
  li.dataset.alertId = alert.alert_id;
  li.dataset.kind = alert.kind;
  li.dataset.state = alert.state;
  li.dataset.camera = alert.camera_id;
  li.dataset.reviewed = alert.reviewed_by ? "yes" : "no";
  const pick = element("input");
  pick.type = "checkbox";
  pick.className = "pick";
  pick.addEventListener("change", updateButtons);
  let picture;
  if (alert.snapshot) {
    picture = element("img");
    picture.alt = "snapshot";
    picture.loading = "lazy";
    picture.src = `snapshots/${encodeURIComponent(alert.alert_id)}.jpg`;
  } else {
    picture = element("span", "noevidence", "no snapshot");
  }
  const text = element("div");
  const stranger = alert.stranger ? ` · ${alert.stranger.name || alert.stranger.label}` : "";
  const similarity = alert.similarity === null ? "" : ` · similarity ${alert.similarity.toFixed(2)}`;
  const ended = alert.ended_ts_ms ? ` – ${when(alert.ended_ts_ms)}` : "";
  const reviewed = alert.reviewed_by ? `reviewed by ${alert.reviewed_by}, ${when(alert.reviewed_ts_ms)}` : "not reviewed";
  text.append(
    element("div", "kind", `${alert.kind}${alert.person ? ` · ${alert.person}` : ""}${stranger} · ${alert.state}`),
    element("div", "where", `${alert.camera_id}${alert.zone ? ` · ${alert.zone}` : ""} · count ${alert.count}${similarity}`),
    element("div", "reason", alert.reason || ""),
    life(alert),
    element("div", "when", `${when(alert.started_ts_ms)}${ended}`),
    element("div", "review", reviewed),
    element("div", "comment", alert.comment || ""),
  );
  if (alert.journey && traces) {  // a stranger's, or a named person's: where else they went
    const link = element("a", "journey", "journey");
    link.href = alert.stranger
      ? `strangers?label=${encodeURIComponent(alert.stranger.label)}`
      : `strangers?${alert.journey.split("?")[1]}`;
    text.append(link);
  }
  if (kinds[alert.kind]?.pictured !== false) text.append(clipButton(alert, li));
  li.append(pick, picture, text);
  return li;
}

async function show(before) {
  const response = await fetch(`api/alerts?${query(before)}`);
  const list = document.getElementById("history");
  if (!response.ok) {
    list.replaceChildren(element("li", "empty", `the history is unavailable: ${await response.text()}`));
    return;
  }
  const page = await response.json();
  list.replaceChildren(...page.alerts.map(item));
  if (!page.alerts.length) list.append(element("li", "empty", "No alerts under these filters."));
  document.getElementById("older").disabled = !page.next;
  document.getElementById("older").dataset.next = page.next || "";
  document.getElementById("all").checked = false;
  document.getElementById("summary").textContent = `page ${cursors.length} · ${page.alerts.length} alert(s)`;
  updateButtons();
}

function picked() {
  return [...document.querySelectorAll("#history .pick:checked")].map((box) => box.closest("li").dataset.alertId);
}

function updateButtons() {
  document.getElementById("review").disabled = picked().length === 0;
}

document.getElementById("filters").addEventListener("submit", (event) => {
  event.preventDefault();
  cursors = [null];
  show(null);
});
document.getElementById("newest").addEventListener("click", () => {
  if (location.search.includes("alert=")) history.replaceState(null, "", "history");  // back to every alert
  cursors = [null];
  show(null);
});
document.getElementById("older").addEventListener("click", (event) => {
  const next = event.target.dataset.next;
  cursors.push(next);
  show(next);
});
document.getElementById("all").addEventListener("change", (event) => {
  for (const box of document.querySelectorAll("#history .pick")) box.checked = event.target.checked;
  updateButtons();
});
document.getElementById("review").addEventListener("click", async () => {
  await send("api/alerts/review", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ alert_ids: picked(), comment: document.getElementById("comment").value || null }),
  });
  show(cursors[cursors.length - 1]);
});

// The kind filter's choices: the contract's table of kinds, as the API serves it.
async function listKinds() {
  const response = await fetch("api/kinds");
  if (!response.ok) return;
  const select = document.querySelector("#filters select[name=kind]");
  for (const kind of (await response.json()).kinds) {
    kinds[kind.name] = kind;
    const option = element("option", "", kind.title);
    option.value = kind.name;
    select.append(option);
  }
}

listKinds().finally(() => show(null));

// Search by face: a photo, an alert's faces or an enrolled person, over the sightings the alert store
// keeps; the answer as visits (newest first, each with its best frame) and a timeline per camera (the
// audit log is on the admin page). /search?alert=ID (the live page's link on a stranger) searches at
// once. Text goes in as text (never as HTML).
"use strict";

async function search(event) {
  if (event) event.preventDefault();
  const form = new FormData(document.getElementById("query"));
  const params = new URLSearchParams({ since: form.get("since"), threshold: form.get("threshold") });
  let body = null;
  const photo = form.get("photo");
  if (form.get("alert")) params.set("alert", form.get("alert").trim());
  else if (form.get("person")) params.set("person", form.get("person").trim());
  else if (photo && photo.size) {
    params.set("photo", photo.name);
    body = photo;
  } else {
    say("Choose a photo, or give an alert or a person.");
    return;
  }
  say("Searching ...");
  const response = await send(`api/search?${params}`, { method: "POST", body });
  if (!response.ok) {
    say(`The search was refused: ${await response.text()}`);
    return;
  }
  show(await response.json(), form.get("since"));
}

function show(answer, since) {
  const visits = document.getElementById("visits");
  visits.replaceChildren();
  say(`${answer.sightings} sighting(s) in ${answer.visits.length} visit(s), since ${since} (audit entry ${answer.audit_id}).`);
  for (const visit of answer.visits) {
    const li = element("li", "alert visit");
    li.dataset.camera = visit.camera_id;
    const best = visit.sightings.reduce((a, b) => (b.similarity > a.similarity ? b : a));
    const picture = element("img");
    picture.alt = `best sighting at ${visit.camera_id}`;
    picture.src = best.frame;
    picture.addEventListener("error", () => picture.replaceWith(element("span", "noevidence", "frame gone from Kafka")));
    const text = element("div");
    text.append(
      element("div", "kind", visit.camera_id),
      element("div", "when", `${when(visit.first_ms)} – ${when(visit.last_ms)}`),
      element("div", "similarity", `${visit.sightings.length} sighting(s), best similarity ${visit.best_similarity.toFixed(2)}`),
    );
    li.append(element("span"), picture, text);
    visits.append(li);
  }
  drawTimeline(answer.visits);
}

function drawTimeline(visits) {
  const timeline = document.getElementById("timeline");
  timeline.replaceChildren();
  if (!visits.length) return;
  const start = Math.min(...visits.map((v) => v.first_ms));
  const end = Math.max(Date.now(), ...visits.map((v) => v.last_ms));
  const span = Math.max(end - start, 1);
  const lanes = new Map();
  for (const visit of visits) {
    if (!lanes.has(visit.camera_id)) {
      const lane = element("div", "lane");
      lane.dataset.camera = visit.camera_id;
      lane.append(element("span", "name", visit.camera_id), element("div", "track"));
      lanes.set(visit.camera_id, lane);
      timeline.append(lane);
    }
    const block = element("span", "visit");
    block.style.left = `${(100 * (visit.first_ms - start)) / span}%`;
    block.style.width = `${(100 * (visit.last_ms - visit.first_ms)) / span}%`;
    block.title = `${when(visit.first_ms)} – ${when(visit.last_ms)}`;
    lanes.get(visit.camera_id).querySelector(".track").append(block);
  }
}

document.getElementById("query").addEventListener("submit", search);
const linked = new URLSearchParams(location.search).get("alert");
if (linked) {
  document.querySelector("input[name=alert]").value = linked;
  search();
}

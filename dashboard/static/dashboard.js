// The page: one server-sent-event stream of the dashboard's state, drawn into camera tiles, the
// alerts feed and the consumer groups table. Text goes in as text (never as HTML).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
// COCO keypoint pairs joined into a skeleton (the order of schemas/pose.py KEYPOINT_NAMES).
const BONES = [[0, 1], [0, 2], [1, 3], [2, 4], [5, 6], [5, 7], [7, 9], [6, 8], [8, 10],
               [5, 11], [6, 12], [11, 12], [11, 13], [13, 15], [12, 14], [14, 16]];
const MIN_KEYPOINT_SCORE = 0.2;

const tiles = new Map();  // camera id -> {root, img, svg, figures, shownSeq}
const alertItems = new Map();  // alert id -> li

function svgElement(tag, attributes) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function tileFor(cameraId) {
  if (tiles.has(cameraId)) return tiles.get(cameraId);
  const root = element("div", "tile");
  root.dataset.camera = cameraId;
  const view = element("div", "view");
  const img = element("img");
  img.alt = `latest frame of ${cameraId}`;
  // Both fit the frame into the tile the same way (contain, centred), so boxes stay on the faces.
  const svg = svgElement("svg", { preserveAspectRatio: "xMidYMid meet" });
  view.append(img, svg);
  const meta = element("div", "meta");
  const figures = element("span", "figures");
  meta.append(element("span", "name", cameraId), figures);
  const state = element("div", "state");
  root.append(view, meta, state);
  const cameras = document.getElementById("cameras");
  cameras.querySelector(".empty")?.remove();
  cameras.append(root);
  const tile = { root, img, svg, figures, state, shownSeq: null, pending: null, openZones: new Set() };
  // What was found is drawn once its own frame is on screen, never over another frame.
  img.addEventListener("load", () => { if (tile.pending) draw(tile, tile.pending); });
  tiles.set(cameraId, tile);
  return tile;
}

function draw(tile, camera) {
  tile.svg.replaceChildren();
  tile.svg.setAttribute("viewBox", `0 0 ${camera.width} ${camera.height}`);
  drawZones(tile, camera);
  drawLines(tile, camera);
  for (const face of camera.faces || []) {
    const [x0, y0, x1, y1] = face.box;
    tile.svg.append(svgElement("rect", { class: "face", x: x0, y: y0, width: x1 - x0, height: y1 - y0 }));
  }
  for (const person of camera.people || []) {
    const [x0, y0, x1, y1] = person.box;
    tile.svg.append(svgElement("rect", { class: "person", x: x0, y: y0, width: x1 - x0, height: y1 - y0 }));
    for (const [a, b] of BONES) {
      const [ax, ay, as] = person.keypoints[a];
      const [bx, by, bs] = person.keypoints[b];
      if (as >= MIN_KEYPOINT_SCORE && bs >= MIN_KEYPOINT_SCORE) {
        tile.svg.append(svgElement("line", { class: "bone", x1: ax, y1: ay, x2: bx, y2: by }));
      }
    }
  }
  tile.root.dataset.faces = (camera.faces || []).length;
  tile.root.dataset.people = (camera.people || []).length;
}

// A camera's zones (corners normalised to the frame) under what was found; a zone named by an open
// alert stands out. The name sits at the zone's first corner.
function drawZones(tile, camera) {
  for (const zone of camera.zones || []) {
    const points = zone.corners.map(([x, y]) => `${x * camera.width},${y * camera.height}`).join(" ");
    const alerting = tile.openZones.has(zone.name);
    tile.svg.append(svgElement("polygon", { class: alerting ? "zone alerting" : "zone", points, "data-zone": zone.name }));
    const [x, y] = zone.corners[0];
    const label = svgElement("text", {
      class: "zone-name", x: x * camera.width + 4, y: y * camera.height + camera.height / 24,
      "font-size": camera.height / 24,
    });
    label.textContent = zone.name;
    tile.svg.append(label);
  }
}

// A camera's lines (the line rule's), each with an arrow from its middle the way a forward crossing
// goes: a quarter turn clockwise of the line's direction on screen (top to bottom: left to right).
function drawLines(tile, camera) {
  for (const line of camera.lines || []) {
    const [[ax, ay], [bx, by]] = line.points.map(([x, y]) => [x * camera.width, y * camera.height]);
    tile.svg.append(svgElement("line", { class: "line", x1: ax, y1: ay, x2: bx, y2: by, "data-line": line.name }));
    const length = Math.hypot(bx - ax, by - ay);
    const reach = camera.height / 16;
    const [mx, my] = [(ax + bx) / 2, (ay + by) / 2];
    const [fx, fy] = [((by - ay) / length) * reach, (-(bx - ax) / length) * reach];
    const [px, py] = [-fy / 4, fx / 4];  // a quarter of the arrow's length, across it
    const [tx, ty, hx, hy] = [mx + fx, my + fy, mx + 0.6 * fx, my + 0.6 * fy];
    tile.svg.append(svgElement("line", { class: "line-way", x1: mx, y1: my, x2: hx, y2: hy }));
    tile.svg.append(svgElement("polygon", {
      class: "line-way", points: `${tx},${ty} ${hx + px},${hy + py} ${hx - px},${hy - py}`,
    }));
    const label = svgElement("text", {
      class: "line-name", x: mx - fx + 4, y: my - fy, "font-size": camera.height / 24,
    });
    label.textContent = line.name;
    tile.svg.append(label);
  }
}

function renderCameras(cameras, openAlerts) {
  for (const camera of cameras) {
    const tile = tileFor(camera.camera_id);
    const latency = camera.latency_ms === null ? "no events" : `${camera.latency_ms} ms (max ${camera.latency_max_ms})`;
    tile.figures.textContent = `${camera.fps.toFixed(1)} fps · ${latency}`;
    tile.root.classList.toggle("alerting", openAlerts.has(camera.camera_id));
    tile.openZones = openAlerts.get(camera.camera_id) || new Set();
    showState(tile, camera.status);
    if (camera.frame_seq === undefined) continue;
    tile.pending = camera;
    if (camera.frame_seq !== tile.shownSeq) {
      tile.shownSeq = camera.frame_seq;
      tile.img.src = `frames/${encodeURIComponent(camera.camera_id)}/${camera.frame_seq}.jpg`;
    } else if (tile.img.complete) {
      draw(tile, camera);  // the same frame, its events arrived since
    }
  }
}

// What the camera's producer says of it, when it is not simply streaming.
function showState(tile, status) {
  const down = Boolean(status) && status.state !== "streaming";
  tile.root.classList.toggle("down", down);
  tile.root.dataset.state = status ? status.state : "";
  if (!down) { tile.state.textContent = ""; return; }
  const attempts = status.state === "reconnecting" ? ` · attempt ${status.attempts + 1}` : "";
  tile.state.textContent = `${status.state}${attempts}${status.error ? ` · ${status.error}` : ""}`;
}

function evidenceImage(alertId) {
  const img = element("img");
  img.alt = "evidence frame";
  img.loading = "lazy";
  img.src = `evidence/${encodeURIComponent(alertId)}.jpg`;
  img.addEventListener("error", () => { img.replaceWith(element("span", "empty", "evidence no longer in Kafka")); });
  return img;
}

// Teaching the gallery from an alert: "this is NAME" on a stranger's, "not NAME" on a watched
// person's, and undo on whatever an alert taught. Rebuilt only when what the alert taught changes, so
// a name being typed survives the stream's updates.
let searchOn = false;  // the dashboard runs with --search
let teaches = false;  // the user's role is identity or above: the only ones the API lets teach
let shown = null;  // the last state drawn, drawn again once the role is known
may("identity").then((ok) => {
  teaches = ok;
  document.getElementById("enrol").hidden = !ok;
  if (shown) render(shown);
});

function renderTeach(item, alert, lesson) {
  if (!teaches) return;
  const key = lesson ? `${lesson.how}:${lesson.name}` : alert.kind;
  if (item.dataset.lesson === key) return;
  item.dataset.lesson = key;
  const box = item.querySelector(".teach");
  box.replaceChildren();
  const said = element("span", "teach-said");
  const act = (path, body) => async () => {
    said.textContent = "…";
    const response = await send(`api/alerts/${encodeURIComponent(alert.alert_id)}/${path}`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}),
    });
    said.textContent = response.ok ? "" : await response.text();
  };
  if (lesson) {
    const undo = element("button", "undo", "Undo");
    undo.addEventListener("click", act("undo"));
    box.append(element("span", "taught", lesson.how === "is" ? `enrolled as ${lesson.name}` : `not ${lesson.name}`), undo);
  } else if (alert.kind === "stranger") {
    const name = element("input", "name");
    name.placeholder = "name";
    const enrol = element("button", "enrol", "This is…");
    enrol.addEventListener("click", () => name.value.trim()
      ? act("teach", { name: name.value.trim() })() : (said.textContent = "type the person's name first"));
    box.append(name, enrol);
  } else if (alert.kind === "person_seen" && alert.evidence && alert.evidence.person) {
    const wrong = element("button", "not-person", `Not ${alert.evidence.person}`);
    wrong.addEventListener("click", act("not-person"));
    box.append(wrong);
  }
  if (searchOn && (alert.kind === "stranger" || alert.kind === "person_seen")) {
    const where = element("a", "search-face", "Where else?");  // search by this alert's faces
    where.href = `search?alert=${encodeURIComponent(alert.alert_id)}`;
    box.append(where);
  }
  box.append(said);
}

function renderAlerts(alerts, taught) {
  const list = document.getElementById("alerts");
  if (alerts.length) list.querySelector(".empty")?.remove();
  const seen = new Set();
  alerts.forEach((alert, index) => {
    seen.add(alert.alert_id);
    let item = alertItems.get(alert.alert_id);
    if (!item) {
      item = element("li", "alert");
      const text = element("div");
      text.append(element("div", "kind"), element("div", "where"), element("div", "reason"),
                  element("div", "lifecycle"), element("div", "when"), element("div", "teach"));
      item.append(alert.evidence ? evidenceImage(alert.alert_id) : element("span", "noevidence", "no frame"), text);
      alertItems.set(alert.alert_id, item);
    }
    item.dataset.kind = alert.kind;
    item.dataset.state = alert.state;
    item.dataset.camera = alert.camera_id;
    const person = alert.evidence && alert.evidence.person ? ` · ${alert.evidence.person}` : "";
    item.querySelector(".kind").textContent = `${alert.kind}${person} · ${alert.state}`;
    const similarity = alert.evidence && alert.evidence.similarity !== null && alert.evidence.similarity !== undefined
      ? ` · similarity ${alert.evidence.similarity.toFixed(2)}` : "";
    const zone = alert.zone ? ` · ${alert.zone}` : "";
    item.querySelector(".where").textContent = `${alert.camera_id}${zone} · count ${alert.count}${similarity}`;
    item.querySelector(".reason").textContent = alert.reason || "";
    item.querySelector(".lifecycle").textContent = lifecycle(alert.lifecycle);
    const ended = alert.ended_ts_ms ? ` – ${clock(alert.ended_ts_ms)}` : "";
    item.querySelector(".when").textContent = `${clock(alert.started_ts_ms)}${ended}`;
    renderTeach(item, alert, taught[alert.alert_id]);
    if (list.children[index] !== item) list.insertBefore(item, list.children[index] || null);
  });
  for (const [id, item] of alertItems) {
    if (!seen.has(id)) { item.remove(); alertItems.delete(id); }
  }
}

function renderGroups(groups) {
  const body = document.getElementById("groups");
  body.replaceChildren();
  if (!groups.length) {
    const row = element("tr");
    const cell = element("td", "empty", "No consumer groups.");
    cell.colSpan = 4;
    row.append(cell);
    body.append(row);
  }
  for (const group of groups) {
    const row = element("tr");
    row.dataset.group = group.group;
    const members = element("td");
    for (const member of group.members || []) {
      members.append(element("div", "member", `${member.client_id} @ ${member.host}: ${member.partitions.length} partition(s)`));
    }
    if (group.error) members.append(element("div", "member", group.error));
    const lag = Object.values(group.lag || {}).reduce((a, b) => a + b, 0);
    row.append(element("td", "", group.group), element("td", "", group.state || ""), members,
               element("td", "lag", String(lag)));
    body.append(row);
  }
}

function render(state) {
  shown = state;
  const open = new Map();  // camera id -> the zones its open alerts name
  for (const alert of state.alerts.filter((a) => a.state !== "end")) {
    if (!open.has(alert.camera_id)) open.set(alert.camera_id, new Set());
    if (alert.zone) open.get(alert.camera_id).add(alert.zone);
  }
  renderCameras(state.cameras, open);
  searchOn = Boolean(state.search);
  renderAlerts(state.alerts, state.taught || {});
  renderGroups(state.groups);
  const events = state.cameras.reduce((n, c) => n + c.events_total, 0);
  document.getElementById("summary").textContent =
    `${state.cameras.length} camera(s) · ${events} event(s) seen · ${open.size} camera(s) alerting`;
}

// Enrolling a person from a photo: its bytes are the request's body (the face is found and embedded
// by the dashboard with the detector's own models).
document.getElementById("enrol").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  const said = form.querySelector(".enrol-said");
  const photo = form.elements.photo.files[0];
  said.textContent = "…";
  const query = new URLSearchParams({ name: form.elements.name.value.trim(), photo: photo.name });
  const response = await send(`api/gallery/enrol?${query}`, { method: "POST", body: photo });
  if (response.ok) {
    const enrolled = await response.json();
    said.textContent = `enrolled ${enrolled.name} (${enrolled.faces} face(s))`;
    form.reset();
  } else {
    said.textContent = await response.text();
  }
});

function connect() {
  const status = document.getElementById("status");
  const source = new EventSource("events");
  source.onopen = () => { status.textContent = "live"; status.className = "status live"; };
  source.onmessage = (message) => render(JSON.parse(message.data));
  source.onerror = () => { status.textContent = "reconnecting"; status.className = "status"; };
}

connect();

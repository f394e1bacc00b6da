// Recurring strangers: one row per label (its best face, visits, cameras, first and last seen) with a
// form to say who it is, and a journey (the visits in the order they happened, across cameras, each
// with its face) where a visit can be split off ("not this person"). /strangers?label=unknown-17 opens a stranger's journey,
// /strangers?person=ID an enrolled person's (from search by face). Text goes in as text (never as HTML).
"use strict";

function cell(...children) {
  const td = element("td");
  td.append(...children);
  return td;
}

// A picture of the API's, under this page's prefix; "no picture kept" where the store has none.
function picture(path, alt) {
  const img = element("img");
  img.alt = alt;
  img.loading = "lazy";
  img.src = path.replace(/^\//, "");
  img.addEventListener("error", () => img.replaceWith(element("span", "noevidence", "no picture kept")));
  return img;
}

function stranger(item) {
  const tr = element("tr", "stranger");
  tr.dataset.label = item.label;
  const who = item.name ? `${item.name} (was ${item.label})` : item.label;
  const open = element("button", "journey", "Journey");
  open.type = "button";
  open.addEventListener("click", () => showJourney({ label: item.label }));
  const form = element("form", "name");
  const input = element("input");
  input.name = "name";
  input.placeholder = "this is ...";
  input.setAttribute("aria-label", `name of ${item.label}`);
  const button = element("button", "", "Name");
  button.type = "submit";
  form.append(input, button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const response = await send(`api/strangers/${encodeURIComponent(item.label)}/name`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: input.value }),
    });
    if (!response.ok) {
      say(`Not named: ${await response.text()}`);
      return;
    }
    const named = await response.json();
    const refused = named.refused.map((r) => r.why).join("; ");
    say(`${item.label} is ${named.name}: ${named.taught} visit(s) enrolled${refused ? `; not enrolled: ${refused}` : ""}`);
    list();
  });
  const actions = element("div", "row-actions");
  actions.append(open, form);
  tr.append(
    cell(picture(item.face, `best face of ${item.label}`)),
    cell(element("span", "kind", who)),
    element("td", "visits", String(item.visits)),
    element("td", "route", item.cameras.join(" → ")),
    element("td", "when", when(item.first_ms)),
    element("td", "when", when(item.last_ms)),
    cell(actions),
  );
  return tr;
}

function visit(item, label) {
  const li = element("li", "alert visit");
  li.dataset.alertId = item.alert_id || "";
  li.dataset.camera = item.camera_id;
  const text = element("div");
  text.append(
    element("div", "kind", item.camera_id),
    element("div", "when", `${when(item.first_ms)} – ${when(item.last_ms)}`),
  );
  if (label) {
    const split = element("button", "split", "Not this person");
    split.type = "button";
    split.addEventListener("click", async () => {
      const response = await send(
        `api/strangers/${encodeURIComponent(label)}/split?alert=${encodeURIComponent(item.alert_id)}`,
        { method: "POST" },
      );
      say(response.ok ? `That visit is now ${(await response.json()).label}.` : `Not split: ${await response.text()}`);
      showJourney({ label });
      list();
    });
    text.append(split);
  }
  li.append(picture(item.face || item.best.frame, "face"), text);
  return li;
}

async function showJourney(of) {
  const url = of.label
    ? `api/strangers/${encodeURIComponent(of.label)}/journey`
    : `api/journey?person=${encodeURIComponent(of.person)}`;
  const response = await fetch(url);
  const section = document.getElementById("journey");
  if (!response.ok) {
    say(`No journey: ${await response.text()}`);
    section.hidden = true;
    return;
  }
  const journey = await response.json();
  const title = of.label ? (journey.name ? `${journey.name} (${journey.label})` : journey.label) : journey.subject;
  document.getElementById("journey-title").textContent = `Journey of ${title}`;
  document.getElementById("visits").replaceChildren(...journey.visits.map((v) => visit(v, of.label)));
  section.hidden = false;
  section.scrollIntoView({ block: "nearest" });  // below the list on a narrow screen
  history.replaceState(null, "", `strangers?${new URLSearchParams(of)}`);
}

async function list() {
  const response = await fetch("api/strangers");
  const shown = document.querySelector("#strangers tbody");
  const note = (text) => {
    const td = element("td", "empty", text);
    td.colSpan = 7;
    const tr = element("tr");
    tr.append(td);
    return tr;
  };
  if (!response.ok) {
    shown.replaceChildren(note(`unavailable: ${await response.text()}`));
    return;
  }
  const found = (await response.json()).strangers;
  shown.replaceChildren(...(found.length ? found.map(stranger) : [note("No stranger has been seen yet.")]));
}

list();
const asked = new URLSearchParams(location.search);
if (asked.get("label")) showJourney({ label: asked.get("label") });
else if (asked.get("person")) showJourney({ person: asked.get("person") });

// What every page of the dashboard draws with, loaded before the page's own script. Text goes in as
// text (never as HTML).
"use strict";

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function when(ms) {
  return ms === null ? "" : new Date(ms).toLocaleString();
}

function clock(ms) {
  return ms === null ? "" : new Date(ms).toLocaleTimeString();
}

// An alert's life in short: runs of one state counted, "new → update ×15 → end", as [state, times].
function lifecycle(runs) {
  return runs.map(([state, times]) => (times > 1 ? `${state} ×${times}` : state)).join(" → ");
}

function runsOf(states) {
  const runs = [];
  for (const state of states) {
    if (runs.length && runs[runs.length - 1][0] === state) runs[runs.length - 1][1] += 1;
    else runs.push([state, 1]);
  }
  return runs;
}

function say(text) {
  const said = document.getElementById("said");
  if (said) said.textContent = text;
}

// Who is signed in (GET api/me): the menu keeps only the pages their role may open, and the header
// shows them with a sign-out button. Not signed in: to the sign-in page, and back here after.
const signedIn = (async () => {
  const response = await fetch("api/me");
  if (response.status === 401) {
    const here = location.pathname.split("/").pop() + location.search;
    location.href = `login?next=${encodeURIComponent(here)}`;
    return new Promise(() => {});  // the page is leaving
  }
  const me = await response.json();
  const nav = document.querySelector("nav");
  for (const link of nav.querySelectorAll("a")) {
    const page = `/${link.getAttribute("href").replace(/^\.\//, "")}`;
    if (!me.pages.includes(page)) link.remove();
  }
  const who = element("span", "who", `${me.name} (${me.role})`);
  const out = element("button", "signout", "Sign out");
  out.type = "button";
  out.addEventListener("click", async () => {
    await send("logout", { method: "POST" });
    location.href = "login";
  });
  nav.after(who, out);
  nav.classList.add("ready");
  return me;
})();

// fetch() for a request that changes something: it carries the session's CSRF token.
async function send(url, options = {}) {
  const me = await signedIn;
  const headers = { ...(options.headers || {}), "X-CSRF-Token": me.csrf || "" };
  return fetch(url, { ...options, headers });
}

const ROLES = ["viewer", "reviewer", "identity", "admin"];  // each with the rights of those before it

// Whether the signed-in user's role reaches ``role``: what the page offers follows what the API allows.
async function may(role) {
  const me = await signedIn;
  return ROLES.indexOf(me.role) >= ROLES.indexOf(role);
}

// A table of class "cards" folds into one card per row on a phone (dashboard.css), each cell named by
// its column: the names come from the table's head, whenever its rows are drawn.
for (const table of document.querySelectorAll("table.cards")) {
  const names = [...table.tHead.rows[0].cells].map((th) => th.textContent);
  const name = () => {
    for (const row of table.tBodies[0].rows) {
      [...row.cells].forEach((cell, i) => { cell.dataset.label = names[i] || ""; });
    }
  };
  new MutationObserver(name).observe(table.tBodies[0], { childList: true });
  name();
}

// The sign-in form: name and password as JSON to POST login; on success, the page asked for (?next=,
// a page of this dashboard) or the live page. Accounts are made with `facestream users add`.
"use strict";

document.getElementById("signin").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const next = new URLSearchParams(location.search).get("next") || "";
  const response = await fetch("login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name: form.get("name"), password: form.get("password"), next }),
  });
  if (response.ok) {
    location.href = (await response.json()).next || "./";
  } else {
    document.getElementById("said").textContent = await response.text();
  }
});

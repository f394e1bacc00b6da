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

function say(text) {
  const said = document.getElementById("said");
  if (said) said.textContent = text;
}

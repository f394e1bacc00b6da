// What a person would see wrong with a page as laid out in the window it has, in words: the page wider
// than the window (sideways scrolling), a text squeezed into a column a word or two wide, anything over
// the header or the header taking a quarter of the screen, and on a phone a control too small to press.
// Run by helpers/browser.py's layout_problems (a script's body: it returns the list).
const problems = [];
const doc = document.documentElement;
const width = Math.min(window.innerWidth, doc.clientWidth, screen.width);  // a phone zooms out to fit a page too wide
const named = (el) => `<${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${el.className && typeof el.className === "string" ? "." + el.className.trim().replace(/\s+/g, ".") : ""}>`;
const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
if (doc.scrollWidth > width + 1) {
  const wide = [...document.body.querySelectorAll("*")].filter((el) => shown(el) && el.getBoundingClientRect().right > width + 1);
  problems.push(`the page is ${doc.scrollWidth} px wide in a ${width} px window: ${wide.slice(-3).map(named).join(", ")}`);
}
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const range = document.createRange();
for (let node; (node = walker.nextNode()); ) {
  const words = node.textContent.trim().split(/\s+/).filter(Boolean);
  if (words.length < 3 || !shown(node.parentElement)) continue;
  range.selectNodeContents(node);
  const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.bottom)));
  if (lines.size >= 3 && node.textContent.trim().length / lines.size < 12) {  // two short words a line, or less
    problems.push(`"${node.textContent.trim().slice(0, 40)}" squeezed into ${lines.size} lines in ${named(node.parentElement)}, ${Math.round(node.parentElement.getBoundingClientRect().width)} px wide`);
  }
}
const header = document.querySelector("header");
if (header) {
  const box = header.getBoundingClientRect();
  if (box.height > window.innerHeight / 4) problems.push(`the header is ${Math.round(box.height)} px high`);
  for (let i = 1; i < 10; i++) {
    for (const y of [box.top + 2, (box.top + box.bottom) / 2, box.bottom - 2]) {
      const hit = document.elementFromPoint(box.left + (box.width * i) / 10, y);
      if (hit && !header.contains(hit)) problems.push(`${named(hit)} lies over the header`);
    }
  }
  const main = document.querySelector("main");
  if (main && main.getBoundingClientRect().top < box.bottom - 1) problems.push("the page's content starts under the header");
}
if (width < 640) {
  const controls = document.querySelectorAll("button, select, input:not([type=checkbox]):not([type=hidden]), nav a");
  for (const el of controls) {
    const r = el.getBoundingClientRect();
    if (shown(el) && r.height < 40) problems.push(`${named(el)} "${(el.textContent || el.name || "").trim().slice(0, 20)}" is ${Math.round(r.height)} px high: too small to press`);
  }
}
return [...new Set(problems)];

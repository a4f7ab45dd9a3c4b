// kgp serve's page: upload, list, ask, and see the answer with its evidence and reasoning paths.
// Plain JavaScript over the HTTP API (the same endpoints as kgp.connect); no framework, no CDN.
// Text from documents is only ever set as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const COLOURS = ["#1f5fbf", "#c2410c", "#15803d", "#7e22ce", "#be123c", "#0e7490", "#a16207",
  "#4d7c0f", "#9d174d", "#334155"];

const state = { key: sessionStorage.getItem("kgp-key") || "", keysNeeded: false, turn: 0,
  colours: new Map(), documents: 0, // a document keeps its colour while the page is open
  view: 0 };  // bumped by each question, document, neighbourhood or trace opened: a later one wins

const VIEWS = ["asking", "reader", "explorer"];

function show(view) {  // one of VIEWS in the right column
  for (const name of VIEWS) $(name).hidden = name !== view;
}

function failed(message) {  // said where it is seen, whatever view was open
  show("asking");
  say("ask-status", message, "bad");
}

function headers(extra) {
  const h = Object.assign({}, extra || {});
  if (state.key) h.Authorization = "Bearer " + state.key;
  return h;
}

async function call(method, path, body, extra) {
  const key = state.key;
  const response = await fetch(path, { method, body, headers: headers(extra) });
  if (response.status === 401 && key === state.key) {  // not for a key already replaced
    askForKey("That key was not accepted; enter a valid API key.");
  }
  if (!response.ok) {
    let message = response.statusText;
    try { message = (await response.json()).error || message; } catch (e) { /* not JSON */ }
    throw new Error(message);
  }
  return response;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "text") node.textContent = value;
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function say(id, text, tone) {
  const node = $(id);
  node.textContent = text;
  node.className = "status" + (tone ? " " + tone : "");
}

// -- who is asking ---------------------------------------------------------------------------

function askForKey(message) {
  $("key-form").hidden = false;
  if (message) $("who").textContent = message;
  $("key").focus();
}

async function start() {
  const health = await (await fetch("health")).json();
  state.keysNeeded = Boolean(health.keys);
  $("upload-groups").placeholder = state.keysNeeded ? "the key's upload groups" : "public";
  $("groups-help").textContent = state.keysNeeded
    ? "comma-separated, among your own groups"
    : "comma-separated groups that may read it";
  if (state.keysNeeded && !state.key) {
    askForKey("This server needs an API key.");
    return;
  }
  await refresh();
}

async function refresh() {
  const turn = ++state.turn;  // a later refresh (a new key, say) wins over this one's answers
  try {
    const stats = await (await call("GET", "stats")).json();
    if (turn !== state.turn) return;
    const nodes = stats.labels || {};
    $("who").textContent = `${nodes.Document || 0} documents, ${nodes.Passage || 0} passages` +
      (state.keysNeeded ? " readable with this key" : "");
    $("key-form").hidden = !state.keysNeeded;
  } catch (error) {
    if (turn !== state.turn) return;
    $("who").textContent = error.message;
  }
  await listDocuments(turn);
  await listTraces(turn);
}

// -- saved questions (traces) ---------------------------------------------------------------

async function listTraces(turn) {
  let traces = [];
  try {
    traces = await (await call("GET", "traces?limit=20")).json();
  } catch (error) {
    traces = [];
  }
  if (turn !== state.turn) return;
  $("traces").replaceChildren(...traces.map((t) => {
    const open = el("a", { href: "#asking", text: t.question });
    open.addEventListener("click", (event) => { event.preventDefault(); openTrace(t.id); });
    const when = t.created ? new Date(t.created).toLocaleString() : "";
    const gone = (t.gone || []).length;
    return el("li", { "data-id": t.id }, open, el("small", { text: [when,
      counted(t.items, "result"), gone ? `${gone} gone since` : ""].filter(Boolean)
      .join(" · ") }));
  }));
  $("traces-empty").hidden = traces.length > 0;
}

// A saved trace as a retrieval: each item's path rebuilt from the trace's steps.
async function openTrace(id) {
  const view = ++state.view;
  let trace;
  try {
    trace = await (await call("GET", "traces/" + encodeURIComponent(id))).json();
  } catch (error) {
    if (view === state.view) failed(`Cannot open the saved question: ${error.message}`);
    return;
  }
  if (view !== state.view) return;
  const from = new Map();
  for (const step of trace.steps) if (!from.has(step.target)) from.set(step.target, step.source);
  const pathTo = (pid) => {
    const path = [pid];
    while (from.has(path[0]) && path.length < 20) path.unshift(from.get(path[0]));
    return path;
  };
  const passages = trace.items.map((item) => ({
    id: item.id, text: item.text, score: item.score, page: item.page, hop: item.hop,
    document: { id: item.doc_id, title: item.title || "" }, step_score: 0,
    kind: item.table ? "table" : item.table_id ? "table-rows" : "passage",
    table: item.table_id || null, path: item.table ? [item.id] : pathTo(item.id),
  }));
  show("asking");
  $("question").value = trace.question;
  showEvidence({ passages, timings: {} });
  $("answer").hidden = true;
  const when = trace.created ? new Date(trace.created).toLocaleString() : "an earlier day";
  say("ask-status", `Saved ${when}: ${counted(passages.length, "result")} you may read ` +
    "now, by their rank then. Ask again for a fresh answer.");
  $("results").scrollIntoView({ block: "start" });
}

$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.key = $("key").value.trim();
  sessionStorage.setItem("kgp-key", state.key);
  $("key").value = "";
  refresh();
});

// -- documents -------------------------------------------------------------------------------

async function listDocuments(turn) {
  const body = $("documents").tBodies[0];
  try {
    const documents = await (await call("GET", "documents")).json();
    if (turn !== state.turn) return;
    body.replaceChildren(...documents.map(documentRow));
    state.documents = documents.length;
    $("documents-caption").textContent = documents.length
      ? `${documents.length} documents you may read`
      : "No documents yet: drop some above.";
    if (!documents.length && !$("ask-status").textContent) {
      say("ask-status", "Add documents first (drop them under Documents), then ask about them.");
    } else if (documents.length && $("ask-status").textContent.startsWith("Add documents")) {
      say("ask-status", "");
    }
  } catch (error) {
    if (turn !== state.turn) return;
    $("documents-caption").textContent = "Cannot list the documents: " + error.message;
  }
}

function documentRow(doc) {
  const remove = el("button", { class: "quiet", type: "button", text: "✕",
    "aria-label": `Remove ${doc.id}`, title: `Remove ${doc.id}` });
  remove.addEventListener("click", () => removeDocument(doc.id));
  const groups = (doc.groups || []).join(", ");
  return el("tr", {},
    el("td", { class: "name" }, documentLink(doc.id, breakable(doc.id)),
      el("small", { text: [doc.title !== doc.id ? doc.title : "", groups && `groups: ${groups}`]
        .filter(Boolean).join(" · ") })),
    el("td", { class: "num", text: String(doc.pages ?? "") }),
    el("td", { class: "num", text: String(doc.tables ?? "") }),
    el("td", { class: "num", text: String(doc.passages ?? "") }),
    el("td", {}, remove));
}

// A document id as text that may break after its "/" and ":" (not inside a word).
function breakable(id) {
  return id.split(/(?<=[/:])/).flatMap((part, i) => (i ? [el("wbr"), part] : [part]));
}

async function removeDocument(id) {
  if (!window.confirm(`Remove ${id} and everything kgp learnt from it?`)) return;
  try {
    await call("DELETE", "documents/" + id.split("/").map(encodeURIComponent).join("/"));
    say("upload-status", `Removed ${id}.`, "good");
  } catch (error) {
    say("upload-status", `Cannot remove ${id}: ${error.message}`, "bad");
  }
  await refresh();
}

async function upload(files) {
  if (!files.length) return;
  const form = new FormData();
  for (const file of files) form.append("file", file, file.name);
  const groups = $("upload-groups").value.trim();
  if (groups) form.append("groups", groups);
  say("upload-status", `Reading ${files.length} file(s) into the graph…`);
  try {
    const report = await (await call("POST", "documents", form)).json();
    const parts = ["added", "changed", "unchanged"]
      .filter((kind) => report[kind].length)
      .map((kind) => `${kind} ${report[kind].join(", ")}`);
    const skipped = report.skipped.map((s) => `skipped ${s.path}: ${s.reason}`);
    say("upload-status", [...parts, ...skipped].join("; ") || "Nothing to do.",
      skipped.length ? "bad" : "good");
  } catch (error) {
    say("upload-status", "Upload refused: " + error.message, "bad");
  }
  await refresh();
}

const drop = $("drop");
drop.addEventListener("click", () => $("files").click());
drop.addEventListener("keydown", (event) => {
  if (event.key === "Enter" || event.key === " ") { event.preventDefault(); $("files").click(); }
});
drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (event) => {
  event.preventDefault();
  drop.classList.remove("over");
  upload([...event.dataTransfer.files]);
});
$("files").addEventListener("change", (event) => {
  upload([...event.target.files]);
  event.target.value = "";
});

// -- asking ----------------------------------------------------------------------------------

$("ask-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const question = $("question").value.trim() || $("question").placeholder;
  $("question").value = question;
  const body = { question, k: Number($("k").value) || 10, stream: true };
  if ($("method").value) body.method = $("method").value;
  $("ask-button").disabled = true;
  const view = ++state.view;
  const current = (handle) => (data) => { if (view === state.view) handle(data); };
  say("ask-status", "Following the graph…");
  $("answer").hidden = true;
  try {
    const response = await call("POST", "ask", JSON.stringify(body),
      { "Content-Type": "application/json", Accept: "text/event-stream" });
    await readEvents(response, {
      evidence: current(showEvidence),
      token: current((data) => writing(data.text)),
      answer: current(showAnswer),
    });
  } catch (error) {
    if (view === state.view) say("ask-status", error.message, "bad");
  } finally {
    $("ask-button").disabled = false;
  }
});

async function readEvents(response, handlers) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length && handlers[name]) handlers[name](JSON.parse(data.join("\n")));
    }
    if (done) return;
  }
}

const shown = { passages: [], rank: new Map(), cited: new Set() };

let resizing = 0;
window.addEventListener("resize", () => {  // the drawing fits the box it is in again
  clearTimeout(resizing);
  resizing = setTimeout(() => { if (shown.passages.length) drawPaths(shown.cited); }, 150);
});

function showEvidence(retrieval) {
  shown.passages = retrieval.passages;
  shown.rank = new Map(retrieval.passages.map((p, i) => [p.id, i + 1]));
  const ms = Math.round((retrieval.timings || {}).total_ms || 0);
  say("ask-status", `${retrieval.passages.length} passages in ${ms} ms` +
    (retrieval.notices || []).map((n) => " · " + n).join(""));
  $("results").hidden = false;
  $("answer").hidden = false;
  $("answer-text").textContent = "";
  $("answer-text").className = "writing";
  $("answer-note").textContent = "";
  drawEvidence(new Set());
  drawPaths(new Set());
}

function writing(text) {
  $("answer-text").textContent += text;
}

function showAnswer(answer) {
  const text = $("answer-text");
  text.className = "";
  const cited = new Set(answer.cited || []);
  if (answer.answer === null || answer.answer === undefined) {
    text.textContent = "No answer.";
    $("answer-note").textContent = sentence(answer.error || "") + " The evidence is below.";
  } else {
    text.replaceChildren(answer.answer);
    for (const id of answer.cited || []) {
      const rank = shown.rank.get(id);
      const link = el("a", { class: "cite", href: `#evidence-${rank}`, text: `[${rank}]`,
        title: id });
      link.addEventListener("click", () => light(id));
      text.append(" ", link);
    }
    $("answer-note").textContent = cited.size
      ? `Cites ${cited.size} of the ${(answer.context || []).length} passages it read.`
      : "The answer cites no passage.";
  }
  drawEvidence(cited);
  drawPaths(cited);
}

function sentence(text) {
  const said = text.trim();
  return !said || /[.!?…]$/.test(said) ? said : said + ".";
}

function colourOf(docId) {
  if (!state.colours.has(docId)) {
    state.colours.set(docId, COLOURS[state.colours.size % COLOURS.length]);
  }
  return state.colours.get(docId);
}

function docOf(passageId) {
  const known = shown.passages.find((p) => p.id === passageId);
  return known ? known.document.id : passageId.split("#")[0];
}

function drawEvidence(cited) {
  const items = shown.passages.map((p, i) => {
    const rank = i + 1;
    const via = p.hop === 0 ? "a seed" : p.path.slice(0, -1).join(" → ");
    const kind = p.kind === "passage" ? "" : ` · ${p.kind === "table" ? "table" : "table rows"}`;
    const item = el("li", { id: `evidence-${rank}`, tabindex: "-1",
      class: cited.has(p.id) ? "cited" : "", "data-id": p.id },
      el("span", { class: "rank", text: String(rank) }),
      el("span", { class: "meta" },
        el("b", { text: p.document.title || p.document.id }), " · ",
        documentLink(p.document.id, [p.document.id], p.table || p.id), ` · page ${p.page} · hop ${p.hop} · score ${p.score.toFixed(3)}` +
        ` · step ${p.step_score.toFixed(3)}${kind}` + (cited.has(p.id) ? " · cited" : "")),
      evidenceBody(p),
      el("span", { class: "path" }, `reached from ${via} · `,
        exploreLink(p.kind === "table" ? null : p.id)));
    return item;
  });
  $("evidence").replaceChildren(...items);
}

const LONG = 700;  // characters of a passage shown before its "more"

function evidenceBody(p) {
  const grid = p.kind !== "passage" ? pipeTable(p.text) : null;
  if (grid) return el("div", { class: "text table-wrap", tabindex: "0", role: "region",
    "aria-label": `Table from ${p.document.id}, page ${p.page}` }, grid);
  const body = el("span", { class: "text" });
  if (p.text.length <= LONG) {
    body.textContent = p.text;
    return body;
  }
  const cut = p.text.lastIndexOf(" ", LONG);
  const head = p.text.slice(0, cut > LONG / 2 ? cut : LONG);
  const more = el("button", { type: "button", class: "more", "aria-expanded": "false",
    text: "more" });
  const words = document.createTextNode(head + "… ");
  more.addEventListener("click", () => {
    const open = more.getAttribute("aria-expanded") !== "true";
    words.textContent = open ? p.text + " " : head + "… ";
    more.textContent = open ? "less" : "more";
    more.setAttribute("aria-expanded", String(open));
  });
  body.append(words, more);
  return body;
}

// A table's Markdown (a header row, a |---| rule, rows) as a table; null if it is not one.
function pipeTable(text) {
  const lines = text.split("\n").map((line) => line.trim());
  const rule = lines.findIndex((line) => /^\|?\s*:?-{3,}/.test(line));
  if (rule < 1) return null;
  const cells = (line) => line.replace(/^\|/, "").replace(/\|$/, "").split("|")
    .map((cell) => cell.trim());
  const caption = lines.slice(0, rule - 1).filter(Boolean).join(" ");
  const head = cells(lines[rule - 1]);
  const body = lines.slice(rule + 1).filter((line) => line.startsWith("|")).map(cells);
  const numeric = head.map((_, i) => body.length > 0 &&
    body.every((row) => !row[i] || /^[-+(]?[\d.,\s%$€£)]+$/.test(row[i])));
  const table = el("table", { class: "grid" });
  if (caption) table.append(el("caption", { text: caption }));
  table.append(el("thead", {}, el("tr", {}, ...head.map((cell, i) =>
    el("th", { scope: "col", class: numeric[i] ? "num" : "", text: cell })))));
  table.append(el("tbody", {}, ...body.map((row) => el("tr", {}, ...head.map((_, i) =>
    el("td", { class: numeric[i] ? "num" : "", text: row[i] || "" }))))));
  return table;
}

function drawPaths(cited) {
  shown.cited = cited;
  const columns = [];
  const edges = new Map();
  for (const p of shown.passages) {
    p.path.forEach((id, hop) => {
      columns[hop] = columns[hop] || [];
      if (!columns.some((column) => column && column.includes(id))) columns[hop].push(id);
      if (hop > 0) edges.set(p.path[hop - 1] + "\n" + id, cited.has(p.id));
    });
  }
  const room = $("graph").clientWidth || 800;
  const narrow = room < 560;
  const labelWidth = narrow ? 100 : 128, gapY = 46, top = 34, left = narrow ? 12 : 30;
  const gapX = narrow ? 190 : 250;
  const rows = Math.max(1, ...columns.map((c) => (c ? c.length : 0)));
  const width = left * 2 + Math.max(0, columns.length - 1) * gapX + 40 + labelWidth;
  const height = top + rows * gapY + 10;
  const at = new Map();
  columns.forEach((column, hop) => (column || []).forEach((id, row) =>
    at.set(id, [left + 14 + hop * gapX, top + 16 + row * gapY])));

  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `Reasoning paths: ${columns.length} levels, ` +
    `${at.size} passages, ${edges.size} steps`);
  const defs = svgEl("defs");
  const marker = svgEl("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5",
    markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
  marker.append(svgEl("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#8c96a6" }));
  defs.append(marker);
  svg.append(defs);
  columns.forEach((_, hop) => {
    const label = svgEl("text", { x: String(left + hop * gapX), y: "18", class: "column" });
    label.textContent = hop === 0 ? "seeds" : `hop ${hop}`;
    svg.append(label);
  });
  for (const [key, isCited] of edges) {
    const [from, to] = key.split("\n");
    const [x1, y1] = at.get(from), [x2, y2] = at.get(to);
    svg.append(svgEl("path", { class: "edge" + (isCited ? " cited" : ""),
      d: `M ${x1 + 19 + labelWidth} ${y1} C ${x1 + 60 + labelWidth} ${y1}, ` +
        `${x2 - 50} ${y2}, ${x2 - 16} ${y2}`,
      "marker-end": "url(#arrow)" }));
  }
  for (const [id, [x, y]] of at) {
    const rank = shown.rank.get(id);
    const group = svgEl("g", { class: "node" + (cited.has(id) ? " cited" : "") +
      (rank ? "" : " off"), tabindex: "0", role: "button", "data-id": id,
      "aria-label": rank ? `Evidence ${rank}: ${id}` : `${id} (on a path, not in the evidence)` });
    const title = svgEl("title");
    const passage = shown.passages.find((p) => p.id === id);
    title.textContent = placeOf(id, passage, true, Infinity) +
      (passage ? "\n" + passage.text.slice(0, 200) : "");
    group.append(title, svgEl("circle", { cx: String(x), cy: String(y), r: "14",
      fill: colourOf(docOf(id)) }));
    const number = svgEl("text", { x: String(x), y: String(y + 4), "text-anchor": "middle" });
    number.textContent = rank ? String(rank) : "·";
    const label = svgEl("text", { x: String(x + 19), y: String(y + 4), class: "label" });
    label.textContent = placeOf(id, passage, false, narrow ? 10 : 18);
    group.append(number, label);
    group.addEventListener("click", () => light(id, true));
    group.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); light(id, true); }
    });
    svg.append(group);
  }
  $("graph").replaceChildren(svg);
  const docs = [...new Set([...at.keys()].map(docOf))];
  $("legend").replaceChildren(...docs.map((doc) =>
    el("li", { title: doc }, swatch(colourOf(doc)), titleOf(doc))));
}

function swatch(colour) {
  const dot = el("i", { "aria-hidden": "true" });
  dot.style.background = colour;  // a style property, which the page's CSP allows
  return dot;
}

function titleOf(docId) {
  const known = shown.passages.find((p) => p.document.id === docId);
  const title = known && known.document.title;
  return title && title !== docId ? `${title} (${docId})` : docId;
}

// What a node is, as its document says it: the file's short name and the page, or the table
// (as its caption numbers it, "Table 2.1"; else "Table 2 p. 3", the second table on page 3),
// the name cut to ``most`` characters;
// ``whole``: the document's full id, for a tooltip.
function placeOf(id, passage, whole, most) {
  const doc = passage ? passage.document.id : id.split("#")[0];
  const base = whole ? doc : doc.split("/").pop();
  const name = base.length > most ? base.slice(0, most - 1) + "…" : base;
  const tableId = passage && passage.kind !== "passage" ? (passage.table || passage.id) : id;
  const table = /[#&]page=(\d+)&table=(\d+)/.exec(tableId);
  const printed = passage && /^\s*(?:table|tab\.)\s+([0-9A-Za-z][0-9A-Za-z.\-]*)/i
    .exec(passage.text);  // the number its caption prints ("Table 2.1: ..."), if any
  const numbered = table && (printed ? `Table ${printed[1].replace(/[.:]$/, "")}`
    : `Table ${Number(table[2]) + 1} p. ${table[1]}`);
  if (table) return most < 15 ? numbered : `${name} · ${numbered}`;  // (its colour: the document)
  return passage ? `${name} · p. ${passage.page}` : name;
}

function svgEl(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  return node;
}

function light(id, focus) {
  for (const node of document.querySelectorAll(".lit")) node.classList.remove("lit");
  for (const node of document.querySelectorAll(`[data-id="${CSS.escape(id)}"]`)) {
    node.classList.add("lit");
  }
  const rank = shown.rank.get(id);
  if (focus && rank) $(`evidence-${rank}`).focus();
}

// -- a document as kgp holds it ---------------------------------------------------------------

function documentLink(id, label, at) {
  const link = el("a", { href: "#document", class: "doc-link",
    title: `Read ${id} as kgp holds it` }, ...label);
  link.addEventListener("click", (event) => { event.preventDefault(); openDocument(id, at); });
  return link;
}

async function openDocument(id, at) {
  const turn = ++state.view;
  let view;
  try {
    view = await (await call("GET", "documents/" +
      id.split("/").map(encodeURIComponent).join("/"))).json();
  } catch (error) {
    if (turn === state.view) failed(`Cannot open ${id}: ${error.message}`);
    return;
  }
  if (turn !== state.view) return;
  show("reader");
  $("reader-title").textContent = view.title && view.title !== view.id
    ? `${view.title} (${view.id})` : view.id;
  const synced = view.ingested_at ? new Date(view.ingested_at).toLocaleString() : "unknown";
  const passages = view.pages.reduce((n, page) => n + page.passages.length, 0);
  const tables = view.pages.reduce((n, page) => n + page.tables.length, 0);
  $("reader-meta").textContent = [
    view.kind, `${Math.max(1, Math.round(view.bytes / 1024))} KB`,
    [counted(view.pages.length, "page"), counted(passages, "passage"),
      counted(tables, "table")].join(", "),
    `synced ${synced}`, `readable by ${view.groups.join(", ") || "(none of your groups)"}`,
  ].filter(Boolean).join(" · ");
  $("reader-find").value = "";
  $("reader-found").textContent = "";
  $("reader-pages").replaceChildren(...view.pages.map((page) =>
    el("section", { class: "page", "aria-label": `Page ${page.number}` },
      el("h3", { text: `Page ${page.number}` }),
      ...page.passages.map((p) => el("p", { class: "passage", "data-id": p.id,
        "data-text": p.text.toLowerCase(), tabindex: "-1" }, p.text, " ", exploreLink(p.id))),
      ...page.tables.map((t) => {
        const grid = pipeTable((t.caption ? t.caption + "\n" : "") + t.markdown);
        return el("div", { class: "passage table-wrap", "data-id": t.id, tabindex: "-1",
          "data-text": (t.caption + "\n" + t.markdown).toLowerCase() },
          grid || el("pre", { text: t.markdown }));
      }))));
  const target = at && $("reader-pages").querySelector(`[data-id="${CSS.escape(at)}"]`);
  if (target) {
    target.classList.add("lit");
    target.scrollIntoView({ block: "center" });
    target.focus({ preventScroll: true });
  } else {
    $("reader").scrollIntoView({ block: "start" });
    $("reader-title").focus({ preventScroll: true });
  }
}

function counted(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function closeDocument() {
  state.view++;
  show("asking");
  $("question").focus();
}

// -- the graph around a passage -------------------------------------------------------------

const explored = { trail: [], from: null };  // passages visited; the view it was opened from

function exploreLink(id) {
  if (!id) return "";
  const link = el("a", { href: "#explorer", class: "explore", text: "in the graph",
    title: "See this passage's neighbours in the graph" });
  link.addEventListener("click", (event) => {
    event.preventDefault();
    explored.trail = [];
    explored.from = $("reader").hidden ? "asking" : "reader";
    explore(id);
  });
  return link;
}

function kindsChosen() {
  return [...document.querySelectorAll("#explorer input[name=kind]:checked")].map((c) => c.value);
}

async function explore(id) {
  const kinds = kindsChosen();
  const turn = ++state.view;  // a later call (another box ticked, another view) wins
  let near;
  try {
    near = await (await call("GET", "neighbours/" + id.split("/").map(encodeURIComponent)
      .join("/") + "?limit=8&kinds=" + encodeURIComponent(kinds.join(",")))).json();
  } catch (error) {
    if (turn === state.view) failed(`Cannot explore ${id}: ${error.message}`);
    return;
  }
  if (turn !== state.view) return;
  if (explored.trail[explored.trail.length - 1] !== id) explored.trail.push(id);
  show("explorer");
  const focus = near.node;
  $("explorer-title").textContent = `Around ${nodePlace(focus, Infinity)}`;
  $("explorer-text").textContent = focus.text;
  const here = el("a", { href: "#document", text: "open the document here" });
  here.addEventListener("click", (event) => {
    event.preventDefault();
    openDocument(focus.doc_id, focus.table || focus.id);
  });
  $("explorer-where").replaceChildren(`${focus.title || focus.doc_id}, page ${focus.page}` +
    (focus.table ? ", a row group of a table on it" : "") + " · ", here);
  $("explorer-trail").replaceChildren(...explored.trail.map((pid, at) => {
    const last = at === explored.trail.length - 1;
    const step = el(last ? "span" : "a", last ? { "aria-current": "step", text: shortId(pid) }
      : { href: "#explorer", text: shortId(pid) });
    if (!last) step.addEventListener("click", (event) => {
      event.preventDefault();
      explored.trail = explored.trail.slice(0, at + 1);
      explore(pid);
    });
    return el("li", {}, step);
  }));
  drawNeighbourhood(near);
  $("explorer").scrollIntoView({ block: "start" });
  $("explorer-title").focus({ preventScroll: true });
}

function shortId(id) {
  const [doc, place] = id.split("#");
  return `${doc.split("/").pop()} ${place ? place.replace("passage=", "#") : ""}`.trim();
}

function nodePlace(node, most) {
  const base = most === Infinity ? node.doc_id : node.doc_id.split("/").pop();
  const name = base.length > most ? base.slice(0, most - 1) + "…" : base;
  return `${name} · p. ${node.page}`;
}

const EDGE_WORDS = { similar: "similar", next: "next", keyword: "keywords" };

function edgeSays(edge) {
  if (edge.kind === "similar") return `similar ${edge.weight.toFixed(2)}`;
  if (edge.kind === "keyword") return `${Math.round(edge.weight)} shared keyword` +
    (Math.round(edge.weight) === 1 ? "" : "s");
  return "next in the text";
}

function drawNeighbourhood(near) {
  const byId = new Map(near.nodes.map((n) => [n.id, n]));
  const rows = near.edges;
  const room = $("explorer-graph").clientWidth || 800;
  const narrow = room < 560;
  const gapY = 40, top = 24, x0 = narrow ? 44 : 60, x1 = narrow ? 170 : 330;
  const height = Math.max(160, top + rows.length * gapY);
  const svg = svgEl("svg", { width: String(narrow ? room - 4 : Math.min(room - 4, 860)),
    height: String(height), role: "img",
    "aria-label": `${near.node.id} and its ${rows.length} neighbours` });
  const cy = height / 2;
  rows.forEach((edge, row) => {
    const y = top + row * gapY;
    svg.append(svgEl("path", { class: `edge kind-${edge.kind}`,
      d: `M ${x0 + 14} ${cy} C ${x0 + 80} ${cy}, ${x1 - 80} ${y}, ${x1 - 14} ${y}` }));
    const said = svgEl("text", { x: String(x1 + 18), y: String(y + 14), class: "edge-label" });
    said.textContent = narrow ? EDGE_WORDS[edge.kind] : edgeSays(edge);
    svg.append(said);
  });
  svg.append(neighbourNode(near.node, x0, cy, true, narrow));
  for (const [at, place] of belonging(near.node).entries()) {
    svg.append(belongingNode(near.node, place, x0, at === 0 ? cy - 62 : cy + 62, cy));
  }
  rows.forEach((edge, row) => {
    const node = byId.get(edge.id);
    if (node) svg.append(neighbourNode(node, x1, top + row * gapY, false, narrow));
  });
  $("explorer-graph").replaceChildren(svg);
  $("explorer-list").replaceChildren(...rows.map((edge) => {
    const node = byId.get(edge.id);
    const go = el("button", { type: "button", class: "plain",
      text: nodePlace(node, Infinity) });
    go.addEventListener("click", () => explore(node.id));
    return el("li", { "data-id": node.id },
      el("span", { class: `kind kind-${edge.kind}`, text: edgeSays(edge) }), " ", go,
      el("span", { class: "excerpt", text: node.text.length > 240
        ? node.text.slice(0, 239) + "…" : node.text }));
  }));
  if (!rows.length) {
    $("explorer-list").replaceChildren(el("li", { text: "No neighbours of these kinds " +
      "that you may read." }));
  }
}

// What a passage belongs to: its page, and the table whose rows it holds, if any.
function belonging(node) {
  const places = [{ kind: "page", name: `page ${node.page}`, at: node.id }];
  if (node.table) places.push({ kind: "table", name: "its table", at: node.table });
  return places;
}

// A page or table the explored passage belongs to, drawn above or below it: Enter or a click
// opens the document there.
function belongingNode(node, place, x, y, from) {
  const group = svgEl("g", { class: `node belongs kind-${place.kind}`, tabindex: "0",
    role: "button", "data-id": place.at,
    "aria-label": `Open ${node.doc_id} at ${place.name}` });
  const title = svgEl("title");
  title.textContent = `${place.name} of ${node.doc_id}: open the document there`;
  const edge = svgEl("path", { class: "edge kind-belongs",
    d: `M ${x} ${from + (y < from ? -14 : 14)} L ${x} ${y + (y < from ? 11 : -11)}` });
  const box = svgEl("rect", { x: String(x - 11), y: String(y - 11), width: "22", height: "22",
    rx: "3", fill: colourOf(node.doc_id) });
  const label = svgEl("text", { x: String(x + 18), y: String(y + 4), class: "label" });
  label.textContent = place.name;
  group.append(title, box, label);
  const open = () => openDocument(node.doc_id, place.at);
  group.addEventListener("click", open);
  group.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") { event.preventDefault(); open(); }
  });
  const both = svgEl("g");
  both.append(edge, group);
  return both;
}

function neighbourNode(node, x, y, focus, narrow) {
  const group = svgEl("g", { class: "node" + (focus ? " focus" : ""), "data-id": node.id,
    tabindex: focus ? "-1" : "0", role: focus ? "img" : "button",
    "aria-label": focus ? `${node.id}, explored` : `Explore ${node.id}` });
  const title = svgEl("title");
  title.textContent = `${nodePlace(node, Infinity)}\n${node.text.slice(0, 200)}`;
  group.append(title, svgEl("circle", { cx: String(x), cy: String(y), r: focus ? "14" : "11",
    fill: colourOf(node.doc_id) }));
  const label = svgEl("text", focus ? { x: String(x), y: String(y + 30), class: "label",
    "text-anchor": "middle" } : { x: String(x + 18), y: String(y + 1), class: "label" });
  const excerpt = node.text.length > 48 ? node.text.slice(0, 47) + "…" : node.text;
  label.textContent = focus ? "this passage"
    : nodePlace(node, narrow ? 12 : 24) + (narrow ? "" : `: ${excerpt}`);
  group.append(label);
  if (!focus) {
    group.addEventListener("click", () => explore(node.id));
    group.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); explore(node.id); }
    });
  }
  return group;
}

function closeExplorer() {
  state.view++;
  show(explored.from || "asking");
  if (explored.from === "reader") $("reader-title").focus();
  else $("question").focus();
}

$("explorer-close").addEventListener("click", closeExplorer);
for (const box of document.querySelectorAll("#explorer input[name=kind]")) {
  box.addEventListener("change", () => {
    const here = explored.trail[explored.trail.length - 1];
    if (here) explore(here);
  });
}

$("reader-close").addEventListener("click", closeDocument);
document.addEventListener("keydown", (event) => {  // Escape leaves the view on top
  if (event.key !== "Escape") return;
  if (!$("explorer").hidden) closeExplorer();
  else if (!$("reader").hidden) closeDocument();
});
$("reader-find").addEventListener("input", () => {
  const wanted = $("reader-find").value.trim().toLowerCase();
  let found = 0;
  for (const item of $("reader-pages").querySelectorAll(".passage")) {
    const hit = !wanted || item.dataset.text.includes(wanted);
    item.hidden = !hit;
    found += hit && wanted ? 1 : 0;
  }
  for (const page of $("reader-pages").querySelectorAll("section.page")) {
    page.hidden = Boolean(wanted) && !page.querySelector(".passage:not([hidden])");
  }
  $("reader-found").textContent = wanted
    ? (found ? `${found} passages or tables contain it` : "Nothing here contains it.") : "";
});

start();

// "A model that learned" (docs/model.md): every head's pattern redrawn for the reader's tokens,
// computed by attention_math.toy.live in the page's Python (the worker), from the trained
// weights this site ships (data-weights). Imported by live.js on the first press of a button
// of the form; the drawing is the markup attention_site.figures.toy_heads.head_svg writes at
// build time, so a redraw looks like the first paint.

// viridis at 0, 1/8, …, 1, as in attention_site.figures.toy_heads
const VIRIDIS = [
  [68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37],
];

// Python's round(): halves go to the even neighbour, as toy_figures.viridis rounds
function roundHalfEven(x) {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

function colour(p) {
  const x = Math.min(Math.max(p, 0), 1) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(x), VIRIDIS.length - 2);
  const t = x - i;
  const hex = VIRIDIS[i].map((a, k) => roundHalfEven(a + (VIRIDIS[i + 1][k] - a) * t));
  return "#" + hex.map((c) => c.toString(16).padStart(2, "0")).join("");
}

const SVG = "http://www.w3.org/2000/svg";

function drawHead(figure, pattern) {
  const n = pattern.length;
  const cell = 6;
  const side = n * cell;
  const svg = figure.querySelector("svg");
  svg.setAttribute("viewBox", `-1 -1 ${side + 2} ${side + 2}`);
  const frame = document.createElementNS(SVG, "rect");
  for (const [k, v] of Object.entries({ x: -1, y: -1, width: side + 2, height: side + 2, fill: "none", stroke: "currentColor", "stroke-width": 0.5 })) {
    frame.setAttribute(k, v);
  }
  const cells = [frame];
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      const r = document.createElementNS(SVG, "rect");
      r.setAttribute("x", j * cell);
      r.setAttribute("y", i * cell);
      r.setAttribute("width", cell);
      r.setAttribute("height", cell);
      r.setAttribute("fill", colour(pattern[i][j]));
      cells.push(r);
    }
  }
  svg.replaceChildren(...cells);
  figure.dataset.pattern = JSON.stringify(pattern);
}

// A seeded generator (mulberry32): the same seed gives the same sequence on every browser.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// n distinct random tokens, then the same n again: the held-out kind of sequence.
function repeated(seed, n, vocab) {
  const next = generator(seed);
  const pool = [...Array(vocab).keys()];
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  const half = pool.slice(0, n);
  return [...half, ...half];
}

function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function save(figure, kind) {
  const name = `toy-layer${+figure.dataset.layer + 1}-head${+figure.dataset.head + 1}`;
  if (kind === "csv") {
    const rows = JSON.parse(figure.dataset.pattern);
    const header = ["query\\key", ...rows.map((_, j) => j + 1)].join(",");
    const lines = rows.map((row, i) => [i + 1, ...row.map((p) => String(p))].join(","));
    download(`${name}.csv`, "text/csv", [header, ...lines].join("\n") + "\n");
  } else {
    const svg = figure.querySelector("svg").cloneNode(true);
    svg.setAttribute("xmlns", SVG);
    svg.setAttribute("color", "#333");
    download(`${name}.svg`, "image/svg+xml", new XMLSerializer().serializeToString(svg));
  }
}

let weights = null; // the weights file's text, fetched once

function parse(text, vocab, nCtx) {
  const parts = text.trim().split(/[\s,]+/).filter(Boolean);
  if (!parts.length) return "Type some tokens first.";
  if (parts.length > nCtx) return `At most ${nCtx} tokens, got ${parts.length}.`;
  const tokens = [];
  for (const p of parts) {
    if (!/^\d+$/.test(p) || +p >= vocab) return `"${p}" is not a token: use whole numbers 0 … ${vocab - 1}.`;
    tokens.push(+p);
  }
  return tokens;
}

export async function submit(form, submitter, run) {
  const figure = submitter?.closest?.("figure.toy-head");
  if (figure) return save(figure, submitter.classList.contains("toy-csv") ? "csv" : "svg");
  const input = form.querySelector("input[data-toy-tokens]");
  const heads = form.querySelector("[data-toy-heads]");
  const progress = form.querySelector(".exercise-check__progress");
  const verdict = form.querySelector(".exercise-check__verdict");
  const vocab = +form.dataset.vocab;
  const nCtx = +form.dataset.nCtx;
  if (submitter?.classList.contains("toy-random")) {
    const seed = Math.max(0, Math.floor(+form.querySelector(".toy-live__seed").value || 0));
    input.value = repeated(seed, Math.min(16, Math.floor(nCtx / 2)), vocab).join(" ");
  }
  const tokens = parse(input.value, vocab, nCtx);
  if (typeof tokens === "string") {
    verdict.textContent = tokens;
    verdict.dataset.verdict = "error";
    return;
  }
  heads.dataset.state = "busy";
  verdict.removeAttribute("data-verdict");
  verdict.textContent = "";
  progress.textContent = "Working…";
  for (const b of form.querySelectorAll("button")) b.disabled = true;
  try {
    if (weights === null) {
      const response = await fetch(new URL(form.dataset.weights, location.href));
      if (!response.ok) throw new Error(`the weights: HTTP ${response.status}`);
      weights = await response.text();
    }
    const t0 = performance.now();
    const r = await run("toy", [weights, tokens], (p) => {
      progress.textContent = p;
    });
    if (r.error) throw new Error(r.error);
    for (const fig of heads.querySelectorAll("figure.toy-head")) {
      drawHead(fig, r.patterns[+fig.dataset.layer][+fig.dataset.head]);
    }
    const ms = performance.now() - t0;
    input.dataset.toyTokens = tokens.join(" ");
    heads.dataset.ms = ms.toFixed(1);
    verdict.textContent = `${tokens.length} tokens: every head redrawn, computed by Python in this page (${Math.round(ms)} ms).`;
    verdict.dataset.verdict = "correct";
    heads.dataset.state = "ready";
  } catch (err) {
    verdict.textContent = `The heads were not redrawn: ${err.message}`;
    verdict.dataset.verdict = "error";
    heads.dataset.state = "error";
  } finally {
    progress.textContent = "";
    for (const b of form.querySelectorAll("button")) b.disabled = false;
  }
}

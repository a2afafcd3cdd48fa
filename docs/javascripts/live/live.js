// The answer boxes' page side, imported on the first "Check" (hooks/live.py adds the import).
// The checking itself runs in worker.js, off the page's thread; the runtime it loads is kept
// for every later check on the page.
const version = new URL(import.meta.url).search; // cache-busting ?v=… of this build
const FIRST_MS = 180_000; // the first check also downloads and starts Python
const LATER_MS = 60_000;

let worker = null;
let loaded = false;
let nextId = 0;
const pending = new Map();

function start() {
  worker = new Worker(new URL(`worker.js${version}`, import.meta.url), { type: "module" });
  worker.onmessage = ({ data }) => {
    const call = pending.get(data.id);
    if (!call) return;
    if ("progress" in data) return call.progress(data.progress);
    pending.delete(data.id);
    clearTimeout(call.timer);
    loaded = loaded || "result" in data;
    "result" in data ? call.resolve(data.result) : call.reject(new Error(data.error));
    if (data.fatal) stop("Python stopped; it restarts on the next check");
  };
  worker.onerror = (e) => stop(`the checker failed to start: ${e.message || "unknown error"}`);
}

// A runaway check cannot be interrupted inside the worker: end the worker, fail what waits,
// and start a fresh one on the next check.
function stop(reason) {
  worker?.terminate();
  worker = null;
  loaded = false;
  for (const call of pending.values()) {
    clearTimeout(call.timer);
    call.reject(new Error(reason));
  }
  pending.clear();
}

export function run(op, args, progress = () => {}) {
  if (!worker) start();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const ms = loaded ? LATER_MS : FIRST_MS;
    const timer = setTimeout(
      () => stop(`no answer after ${ms / 1000} s: the check was stopped; try again`),
      ms,
    );
    pending.set(id, { resolve, reject, progress, timer });
    worker.postMessage({ id, op, args });
  });
}

// Maths computed in the worker comes as MathML (attention_math.mathml), which the browser
// draws natively: no MathJax, nothing more to download. It is parsed as XML and only MathML's
// presentation elements and a few of their attributes are kept.
const MATHML = "http://www.w3.org/1998/Math/MathML";
const ELEMENTS = new Set(
  "math mrow mi mn mo ms mtext mspace mfrac msqrt mroot msub msup msubsup munder mover munderover mtable mtr mtd mstyle mpadded mphantom menclose".split(" "),
);
const ATTRIBUTES = new Set(["display", "mathvariant", "stretchy", "fence", "separator", "columnalign", "linethickness", "lspace", "rspace"]);

function clean(node) {
  for (const child of [...node.children]) {
    if (child.namespaceURI !== MATHML || !ELEMENTS.has(child.localName)) child.remove();
    else clean(child);
  }
  for (const { name, value } of [...node.attributes]) {
    // a matrix's class: extra.css draws its brackets (attention_math.mathml)
    const matrix = name === "class" && value === "am-matrix";
    if (!ATTRIBUTES.has(name) && name !== "xmlns" && !matrix) node.removeAttribute(name);
  }
  return node;
}

export function mathml(markup) {
  const doc = new DOMParser().parseFromString(markup, "application/xml");
  const root = doc.documentElement;
  if (root.namespaceURI !== MATHML || root.localName !== "math") return null;
  return document.importNode(clean(root), true);
}

function typeset(el, markup) {
  el.replaceChildren();
  const math = markup && mathml(markup);
  if (math) el.append(math);
}

async function checkAnswer(form) {
  const input = form.querySelector("input[data-exercise-id]");
  const button = form.querySelector("button");
  const progress = form.querySelector(".exercise-check__progress");
  const verdict = form.querySelector(".exercise-check__verdict");
  const echo = form.querySelector(".exercise-check__echo");
  const text = input.value.trim();
  if (!text) {
    verdict.dataset.verdict = "error";
    verdict.textContent = "Type an answer first.";
    return;
  }
  button.disabled = true;
  verdict.removeAttribute("data-verdict");
  verdict.textContent = "";
  progress.textContent = loaded ? "Checking…" : "Starting Python in the page…";
  try {
    const r = await run("check", [input.dataset.exerciseId, text, form.dataset.chapter ?? ""], (p) => {
      progress.textContent = p;
    });
    typeset(echo, r.mathml);
    verdict.textContent = r.message;
    verdict.dataset.verdict = r.verdict;
  } catch (err) {
    echo.replaceChildren();
    verdict.textContent = `The check did not run: ${err.message}`;
    verdict.dataset.verdict = "error";
  } finally {
    progress.textContent = "";
    button.disabled = false;
  }
}

export async function submit(form, submitter) {
  if (form.classList.contains("toy-live")) {
    const toy = await import(new URL(`toy.js${version}`, import.meta.url));
    return toy.submit(form, submitter, run);
  }
  if (form.classList.contains("own-example")) {
    const own = await import(new URL(`own-example.js${version}`, import.meta.url));
    return own.submit(form, run, typeset);
  }
  return checkAnswer(form);
}

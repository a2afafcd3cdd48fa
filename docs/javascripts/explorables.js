// The explorables (attention_site/explorables.py): a slider chooses one of the stops the
// package computed when the site was built; this swaps in that stop's texts and drawing.
// No number is computed here. Listed in extra_javascript with `defer`, so the page paints
// without waiting for it.
(() => {
  "use strict";

  const start = (root) => {
    if (root.dataset.explorableReady) return;
    root.dataset.explorableReady = "1";
    let data = null; // parsed when the browser is idle, or at the first move if sooner
    const parse = () => {
      data = data || JSON.parse(root.querySelector('script[type="application/json"]').textContent);
    };
    const inputs = [...root.querySelectorAll('input[type="range"]')];
    const figure = root.querySelector("[data-figure]");
    const shown = {};
    for (const el of root.querySelectorAll("[data-quantity]")) shown[el.dataset.quantity] = el;
    const byName = {};
    for (const input of inputs) byName[input.dataset.slider] = input;

    const redraw = () => {
      parse();
      for (const input of inputs) {
        const limit = input.dataset.limit && byName[input.dataset.limit];
        if (limit) {
          // a head index never beyond the head count
          input.max = limit.value;
          if (+input.value > +input.max) input.value = input.max;
        }
        input.setAttribute("aria-valuetext", data.stops[input.dataset.slider][+input.value]);
      }
      const key = inputs.map((input) => input.value).join(",");
      const frame = data.frames[key];
      if (!frame) return;
      for (const [name, text] of Object.entries(frame.q)) {
        const el = shown[name];
        if (!el) continue;
        if (el.textContent !== text) el.textContent = text;
        if (name in frame.v) el.dataset.value = String(frame.v[name]);
      }
      figure.innerHTML = frame.fig;
      root.dataset.stop = key;
    };

    for (const input of inputs) input.addEventListener("input", redraw);
    // The page is written at the starting stops. A reader may have moved a slider before
    // this deferred script ran: catch up.
    const key = inputs.map((input) => input.value).join(",");
    if (key !== root.dataset.stop) redraw();
    else if (window.requestIdleCallback) requestIdleCallback(parse, { timeout: 2000 });
    else setTimeout(parse, 200);
    for (const input of inputs) {
      const limit = input.dataset.limit && byName[input.dataset.limit];
      if (limit) input.max = limit.value; // a head index never beyond the head count
    }
  };

  const startAll = () => document.querySelectorAll("[data-explorable]").forEach(start);
  startAll();
  // with the theme's instant navigation a new page arrives without a load event
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(startAll);
  }
})();

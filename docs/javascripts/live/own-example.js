// "Your own example" (docs/forward/own-example.md): the form's matrices go to
// attention_math.own_example in the worker; each step comes back exact and in decimals, as
// MathML the browser draws itself. Imported by live.js on the first "Show every step".

// As on the worked examples: "name = exact ≈ decimals" on one line when it fits (the two
// halves wrap onto two lines on a narrow screen); a long exact form is folded, a click away,
// below "name ≈ decimals".
function step(s, render) {
  const box = document.createElement("div");
  box.className = "own-example__step";
  const math = (markup) => {
    const el = document.createElement("div");
    el.className = "own-example__math";
    render(el, markup);
    return el;
  };
  if (s.latex.length > 400) {
    const fold = document.createElement("details");
    const summary = document.createElement("summary");
    summary.textContent = "Exact form";
    fold.append(summary, math(s.exact));
    box.append(math(s.decimal), fold);
  } else {
    box.classList.add("own-example__step--pair");
    box.append(math(s.exact), math(s.approx));
  }
  return box;
}

export async function submit(form, run, render) {
  const mode = form.querySelector('input[name="mode"]:checked').value;
  const mask = form.querySelector('input[name="mask"]:checked').value;
  const matrices = {};
  for (const area of form.querySelectorAll(`.own-example__${mode} textarea`)) {
    matrices[area.name] = area.value;
  }
  const button = form.querySelector("button");
  const progress = form.querySelector(".exercise-check__progress");
  const status = form.querySelector(".exercise-check__verdict");
  const steps = form.querySelector(".own-example__steps");
  button.disabled = true;
  status.removeAttribute("data-verdict");
  status.textContent = "";
  progress.textContent = "Working…";
  try {
    const r = await run("example", [matrices, mask], (p) => {
      progress.textContent = p;
    });
    if (r.error) {
      status.textContent = r.error;
      status.dataset.verdict = "error";
      steps.replaceChildren();
      return;
    }
    steps.replaceChildren(...r.steps.map((s) => step(s, render)));
    status.textContent = `${r.steps.length} steps, exact and in decimals (cross-checked in plain floats).`;
    status.dataset.verdict = "correct";
  } catch (err) {
    status.textContent = `The example did not run: ${err.message}`;
    status.dataset.verdict = "error";
  } finally {
    progress.textContent = "";
    button.disabled = false;
  }
}

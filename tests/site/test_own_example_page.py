"""The own-example page's experiments and its download sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attention_site.pages.own_example import (
    EXPERIMENTS,
    Experiment,
    download_sentence,
    experiments_markdown,
    runtime_download,
)


@pytest.mark.slow  # SymPy simplifies each experiment: over a second of CPU
def test_every_experiment_is_listed_with_its_inputs_and_a_folded_answer() -> None:
    md = experiments_markdown()
    for i, e in enumerate(EXPERIMENTS, 1):
        assert f"{i}. **{e.title}**" in md
        for text in e.matrices:
            assert f"`{text}`" in md
    assert md.count('??? note "What the form shows"') == len(EXPERIMENTS)
    assert "<" not in md.replace("\\", "")  # every page link was resolved


@pytest.mark.slow  # SymPy simplifies each experiment: over a second of CPU
def test_a_false_claim_of_equal_weights_fails() -> None:
    wrong = Experiment("Not a shift", ("1 0; 0 1", "2 1; 1 3", "1 2; 3 4"), "none", "", "P")
    with pytest.raises(ValueError, match="P differs"):
        experiments_markdown((wrong,))


@pytest.mark.slow  # SymPy simplifies each experiment: over a second of CPU
def test_a_false_claim_of_equal_outputs_fails() -> None:
    wrong = Experiment("Keys only", ("1 0; 0 1", "0 1; 1 0", "1 2; 3 4"), "none", "", "O")
    with pytest.raises(ValueError, match="O differs"):
        experiments_markdown((wrong,))


def test_an_input_the_form_rejects_fails_the_build() -> None:
    bad = Experiment("Bad", ("1 0; 0 1", "1 0 0", "1 2; 3 4"), "none", "")
    with pytest.raises(ValueError, match="the form rejects it"):
        experiments_markdown((bad,))


def _runtime(tmp_path: Path) -> Path:
    core = tmp_path / "pyodide-9.9"
    (core).mkdir()
    (core / "pyodide.asm.wasm").write_bytes(b"w" * 3_000_000)
    (core / "python_stdlib.zip").write_bytes(b"s" * 1_000_000)
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / "sympy.whl").write_bytes(b"y" * 2_000_000)
    manifest = {
        "pyodide": "9.9",
        "core": "pyodide-9.9/",
        "stdlib": {"path": "pyodide-9.9/python_stdlib.zip"},
        "wheels": [{"name": "sympy", "path": "wheels/sympy.whl"}],
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def test_the_download_is_every_file_of_the_runtime(tmp_path: Path) -> None:
    sizes = runtime_download(_runtime(tmp_path))
    assert sizes is not None
    assert list(sizes.values()) == [3_000_000, 1_000_000, 2_000_000]
    sentence = download_sentence(tmp_path)
    assert sentence.startswith("The first press downloads 6.0 MB")
    assert "Pyodide (3.0 MB) and sympy (2.0 MB)" in sentence  # the two largest, largest first
    assert "standard library" not in sentence and "9.9" not in sentence  # no build detail


def test_a_build_without_the_runtime_says_so(tmp_path: Path) -> None:
    assert runtime_download(tmp_path) is None
    assert "no in-browser runtime" in download_sentence(tmp_path)

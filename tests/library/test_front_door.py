"""The front door: ``import attention_math as am`` gives the names the pages and learners call."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

import attention_math as am


@pytest.mark.parametrize("name", am.__all__)
def test_every_front_door_name_resolves(name):
    value = getattr(am, name)
    if isinstance(value, types.ModuleType):
        assert value.__name__ == f"attention_math.{name}"
    elif name != "__version__":
        # the name is the object its module defines, not a copy or a wrapper
        home = importlib.import_module(value.__module__)
        assert getattr(home, name) is value


def test_completion_lists_the_front_door():
    assert set(dir(am)) == set(am.__all__)
    assert {"attention", "softmax", "causal_mask", "symbolic", "KVCache"} <= set(dir(am))


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'atention'"):
        am.atention  # noqa: B018


@pytest.mark.slow
def test_importing_the_package_imports_no_numpy():
    # the exact side runs in the reader's browser without NumPy: the front door is lazy
    code = (
        "import sys, attention_math, attention_math.symbolic\n"
        "assert 'numpy' not in sys.modules, 'numpy imported'\n"
        "attention_math.attention\n"
        "assert 'numpy' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_all_lists_exactly_the_names_the_package_loads():
    assert set(am.__all__) == {"__version__", *am._HOME}


# the named results of a call (what it returns, documented there) and the display helper
RESULTS = {"AttentionLSE", "AttentionGrads", "AttentionGradsDMask"}
NO_REFERENCES = {*RESULTS, "show"}


@pytest.mark.parametrize("name", [n for n in am.__all__ if callable(getattr(am, n))])
def test_a_front_door_name_links_its_siblings_and_its_sources(name):
    doc = getattr(am, name).__doc__ or ""
    if name not in RESULTS:
        assert "See Also:" in doc, f"{name} has no See Also section"
    if name not in NO_REFERENCES:
        assert "References:" in doc and "https://" in doc, f"{name} cites no source"

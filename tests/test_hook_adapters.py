"""The build's hooks reach other libraries' private internals through one adapter module per
library (``hooks/*_adapter.py``), each written against one version of that library. When the
installed version changes, these tests fail and say which file to read again."""

from __future__ import annotations

import pytest

from tests.hooks import load_hook

ADAPTERS = {
    "markdown_exec_adapter": "markdown-exec",
    "mkdocstrings_adapter": "mkdocstrings-python",
}


@pytest.mark.parametrize(("adapter", "library"), ADAPTERS.items())
def test_the_installed_library_is_the_one_the_adapter_was_written_against(
    adapter: str, library: str
) -> None:
    module = load_hook(adapter)
    assert module.installed() == module.PINNED, (
        f"{library} {module.installed()} is installed, but hooks/{adapter}.py was written "
        f"against {library} {module.PINNED}: check that the private names it uses "
        f"({', '.join(module.private_names())}) still mean the same in {module.installed()}, "
        f"then set PINNED there to {module.installed()!r}"
    )


@pytest.mark.parametrize(("adapter", "library"), ADAPTERS.items())
def test_every_private_name_the_adapter_uses_exists(adapter: str, library: str) -> None:
    module = load_hook(adapter)
    missing = [name for name, obj in module.private_names().items() if obj is None]
    assert not missing, f"{library} {module.installed()} has no {missing} (hooks/{adapter}.py)"


def test_no_other_hook_imports_a_private_module() -> None:
    from tests.hooks import HOOKS

    for path in sorted(HOOKS.glob("*.py")):
        if path.stem in ADAPTERS:
            continue
        text = path.read_text(encoding="utf-8")
        assert "._internal" not in text, f"{path.name} imports a private module: use an adapter"


def test_the_runner_round_trips() -> None:
    # what the execution cache and the parallel worker do: wrap the runner, then put it back
    exec_ = load_hook("markdown_exec_adapter")
    before = exec_.runner()

    def wrapper(*args: object, **kwargs: object) -> str:
        return before(*args, **kwargs)

    exec_.set_runner(wrapper)
    try:
        assert exec_.runner() is wrapper
        assert exec_.original_runner() is not wrapper
    finally:
        exec_.set_runner(before)
    assert exec_.runner() is before

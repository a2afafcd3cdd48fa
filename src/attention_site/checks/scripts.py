"""The scripts the site ships, and the elements of a page that use each one.

Derived from what ships them, not typed here: the theme's bundle (loaded on every page), the
explorables' script, which the Markdown extension ``attention_site.extensions.explorables``
writes on the pages with an element with its ``ATTRIBUTE`` only, and each script of
``extra_javascript`` in ``mkdocs.yml``, which the theme writes into every page: such a script
has no known users, and ``script_users`` says so.
"""

from __future__ import annotations

from attention_site.checks.browser import THEME_SCRIPT
from attention_site.checks.hooks import mkdocs_config
from attention_site.extensions import explorables

__all__ = ["extra_scripts", "script_users"]


def extra_scripts() -> list[str]:
    """The paths of ``mkdocs.yml``'s ``extra_javascript`` (``javascripts/explorables.js``)."""
    entries = mkdocs_config().get("extra_javascript") or []
    return [e["path"] if isinstance(e, dict) else e for e in entries]


def _keepers() -> dict[str, str]:
    """Each script kept off the pages that do not use it -> its users' selector."""
    return {explorables.SCRIPT: f"[{explorables.ATTRIBUTE}]"}


def script_users() -> dict[str, str]:
    """``{part of a script's URL: CSS selector of the elements that use it}``, for every script
    the site ships; raises ``LookupError`` for a script of ``extra_javascript`` (it would
    load on every page, used or not)."""
    users = {THEME_SCRIPT: "body"}  # the theme: navigation, search, copy buttons
    keepers = _keepers()
    for path in extra_scripts():
        if path not in keepers:
            raise LookupError(f"{path} (extra_javascript): nothing keeps it to the pages using it")
    users |= {"/" + path: selector for path, selector in keepers.items()}
    return users

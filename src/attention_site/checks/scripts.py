"""The scripts the site ships, and the elements of a page that use each one.

Derived from what ships them, not typed here: the theme's bundle and each script of
``extra_javascript`` in ``mkdocs.yml``. The theme writes both into every page as it ships
them (overrides/ holds no script), so each one's users are the whole page; a script a page
loads that is in neither is one the site does not ship.
"""

from __future__ import annotations

from attention_site.checks.browser import THEME_SCRIPT
from attention_site.checks.hooks import mkdocs_config

__all__ = ["extra_scripts", "script_users"]


def extra_scripts() -> list[str]:
    """The paths of ``mkdocs.yml``'s ``extra_javascript`` (``javascripts/explorables.js``)."""
    entries = mkdocs_config().get("extra_javascript") or []
    return [e["path"] if isinstance(e, dict) else e for e in entries]


def script_users() -> dict[str, str]:
    """``{part of a script's URL: CSS selector of the elements that use it}``, for every script
    the site ships: the theme's, and each of ``extra_javascript``, on every page (``body``)."""
    users = {THEME_SCRIPT: "body"}  # the theme: navigation, search, copy buttons, palette
    for path in extra_scripts():
        users["/" + path] = "body"  # the theme writes extra_javascript into every page
    return users

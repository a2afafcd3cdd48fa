"""The theme's navigation sections are landmarks; the build gives each one a name."""

from __future__ import annotations

from tests.test_typeset_memo import _hook


def test_navigation_sections_without_a_name_are_named_by_their_title() -> None:
    """With an index page, a section's toggle label holds only an icon: the landmark it
    names would have no name. The build points it at the section's title instead."""
    hook = _hook("assets_nav_probe")
    nav = (
        '<label class="md-nav__link" for="__nav_3" id="__nav_3_label">{label}</label>'
        '<nav class="md-nav" data-md-level="1" aria-labelledby="__nav_3_label" '
        'aria-expanded="true">\n  <label class="md-nav__title" for="__nav_3">'
        '<span class="md-nav__icon md-icon"></span> The forward pass </label></nav>'
    )
    empty = nav.format(label='<span class="md-nav__icon md-icon"></span>')
    out = hook.named_sections(empty)
    assert 'aria-labelledby="__nav_3_label_title"' in out
    assert '<label class="md-nav__title" for="__nav_3" id="__nav_3_label_title">' in out
    named = nav.format(label="Worked examples")
    assert hook.named_sections(named) == named  # a label with text is left as it is

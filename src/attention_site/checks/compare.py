"""Two builds of the site compared page by page: the same site from MkDocs and from Zensical?

Each page is reduced to counts of what the project's own machinery puts there (`FEATURES`):
typeset formulas, exercise boxes, notebook links, ε badges, explorables, the live model's and
the own example's forms, the answer boxes' loader. Two builds match when they hold the same
pages, each page with the same counts, no page keeps raw TeX, and every internal link of each
build resolves to a file of that build. What Zensical cannot do yet (`KNOWN_GAPS`, named in
CONTRIBUTING.md with its upstream issue) is still compared and reported, page by page, but
does not fail the comparison; a link that leads nowhere always fails (`STRICT`).
``tests/build/test_engines.py`` runs it on two fresh builds.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = [
    "FEATURES",
    "KNOWN_GAPS",
    "STRICT",
    "Comparison",
    "broken_links",
    "compare",
    "features",
    "pages",
    "raw_tex",
]

FEATURES: dict[str, re.Pattern[str]] = {
    "typeset formulas": re.compile(r"<mjx-container\b"),
    "exercise boxes": re.compile(r'<form class="exercise-check"'),
    "notebook links": re.compile(r'<p class="notebook-link">'),
    "ε badges": re.compile(r'<a class="checked"'),
    "explorables": re.compile(r"\bdata-explorable="),
    "live-model inputs": re.compile(r'<form class="(?:toy-live|own-example)"'),
    "answer-box loaders": re.compile(r"<script type=\"module\" data-live-loader>"),
}
"""Each feature and what counts one occurrence of it in a page's HTML."""

KNOWN_GAPS: dict[str, str] = {}
"""Feature (or ``"raw TeX"``, ``"pages"``) -> what Zensical cannot do yet and its upstream
issue; a difference there is reported, not failed. None today."""

STRICT = frozenset({"links"})
"""Kinds of difference that fail even when named in `KNOWN_GAPS`: a link that leads nowhere
in either build is the site's own fault (blocks print absolute links,
``attention_site.address``), never a generator's gap."""

# where text is code, not prose: TeX there is shown on purpose
_CODE = re.compile(
    r"<(pre|code|script|style|textarea|mjx-container|math)\b.*?</\1>", re.S | re.IGNORECASE
)
_TEX = re.compile(r"\\\(|\\\[|\$\$")
_TAG = re.compile(r"<[^>]*>")  # a tag, its attributes (a formula's data-tex) with it
_REF = re.compile(r'<(?:a|link|script|img|source|iframe)\b[^>]*?\s(?:href|src)="([^"]*)"', re.S)


def pages(site: Path) -> list[str]:
    """Every HTML page of a built site, by its path in it (``forward/softmax/index.html``).

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     _ = (Path(d) / "a").mkdir(), (Path(d) / "a" / "index.html").write_text("")
        ...     pages(Path(d))
        ['a/index.html']
    """
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


def features(html: str) -> dict[str, int]:
    """The counts of each of `FEATURES` in a page's HTML.

    Examples:
        >>> counts = features('<p class="notebook-link"><a class="checked" href="e/">✓</a>')
        >>> counts["notebook links"], counts["ε badges"], counts["typeset formulas"]
        (1, 1, 0)
    """
    return {name: len(pattern.findall(html)) for name, pattern in FEATURES.items()}


def raw_tex(html: str) -> int:
    """How many TeX delimiters (``\\(``, ``\\[``, ``$$``) are left in a page's text, outside
    code, scripts and typeset maths: formulas nobody typeset.

    Examples:
        >>> raw_tex('<p>So \\\\(x^2\\\\) holds.</p><pre><code>$$ kept $$</code></pre>')
        1
        >>> raw_tex('<p><mjx-container>x</mjx-container></p><div data-tex="a \\\\[1ex]">')
        0
    """
    return len(_TEX.findall(_TAG.sub(" ", _CODE.sub("", html))))


def broken_links(site: Path, page: str, html: str, base: str = "/") -> list[str]:
    """The page's internal links (``href``/``src`` without a scheme) to no file of ``site``;
    a path from the server's root (the 404 page's) is read from ``base``, the site's path.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     site = Path(d)
        ...     (site / "b").mkdir()
        ...     _ = (site / "b" / "index.html").write_text("")
        ...     broken_links(site, "a/index.html", '<a href="../b/">b</a><a href="../c/">c</a>')
        ['../c/']
    """
    out = []
    for target in _REF.findall(html):
        parts = urlsplit(target.replace("&amp;", "&"))
        if parts.scheme or parts.netloc or not parts.path:  # another site, or this page
            continue
        path = unquote(parts.path)
        if path.startswith("/"):  # from the server's root: the site's path first
            if not path.startswith(base):
                out.append(target)
                continue
            path = "./" + path.removeprefix(base)
        else:
            path = posixpath.join(posixpath.dirname(page), path)
        path = posixpath.normpath(path)
        if target.split("#")[0].split("?")[0].endswith("/") or path == ".":
            path = posixpath.join(path, "index.html")
        if path.startswith("../") or not (site / path).is_file():
            out.append(target)
    return out


@dataclass
class Comparison:
    """How two builds differ: each list holds ``(page, what)`` pairs; empty lists: the same."""

    names: tuple[str, str]
    only_in: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)
    raw_tex: dict[str, list[str]] = field(default_factory=dict)
    links: dict[str, list[str]] = field(default_factory=dict)

    def problems(self) -> dict[str, list[str]]:
        """Each kind of difference (a feature, ``pages``, ``raw TeX``, ``links``) -> lines."""
        a, b = self.names
        out: dict[str, list[str]] = {}
        for name, missing in self.only_in.items():
            if missing:
                out.setdefault("pages", []).extend(
                    f"{p}: only in the {name} build" for p in missing
                )
        for feature, rows in self.counts.items():
            if rows:
                out[feature] = [f"{p}: {a} {x}, {b} {y}" for p, x, y in rows]
        for name, where in self.raw_tex.items():
            if where:
                out.setdefault("raw TeX", []).extend(f"{p} ({name})" for p in where)
        for name, where in self.links.items():
            by_page: dict[str, list[str]] = {}
            for line in where:
                page, _, target = line.partition(" -> ")
                by_page.setdefault(page, []).append(target)
            for page, targets in by_page.items():
                shown = ", ".join(dict.fromkeys(targets[:3]))
                more = f" (and {len(targets) - 3} more)" if len(targets) > 3 else ""
                out.setdefault("links", []).append(
                    f"{page} ({name}): {len(targets)} lead nowhere: {shown}{more}"
                )
        return out

    def report(self) -> tuple[str, str]:
        """The failures (differences not known as gaps), and the known gaps, as text."""
        failed: list[str] = []
        known: list[str] = []
        for kind, lines in self.problems().items():
            head = f"{kind}: {len(lines)} page(s) differ"
            gap = kind in KNOWN_GAPS and kind not in STRICT
            if gap:
                head += f" (known: {KNOWN_GAPS[kind]})"
            block = "\n".join([head, *(f"  {line}" for line in lines)])
            (known if gap else failed).append(block)
        return "\n".join(failed), "\n".join(known)


def compare(
    a: Path, b: Path, names: tuple[str, str] = ("mkdocs", "zensical"), base: str = "/"
) -> Comparison:
    """Compare the sites built into ``a`` and ``b`` for the site path ``base`` (the path of
    ``site_url``), page by page (see the module)."""
    result = Comparison(names)
    in_a, in_b = set(pages(a)), set(pages(b))
    result.only_in = {names[0]: sorted(in_a - in_b), names[1]: sorted(in_b - in_a)}
    result.counts = {feature: [] for feature in FEATURES}
    texts = {}
    for name, site, found in ((names[0], a, in_a), (names[1], b, in_b)):
        result.raw_tex[name], result.links[name] = [], []
        for page in sorted(found):
            html = (site / page).read_text(encoding="utf-8", errors="replace")
            texts[name, page] = html
            if raw_tex(html):
                result.raw_tex[name].append(page)
            result.links[name].extend(
                f"{page} -> {t}" for t in broken_links(site, page, html, base)
            )
    for page in sorted(in_a & in_b):
        fa, fb = features(texts[names[0], page]), features(texts[names[1], page])
        for feature in FEATURES:
            if fa[feature] != fb[feature]:
                result.counts[feature].append((page, fa[feature], fb[feature]))
    return result

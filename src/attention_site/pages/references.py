"""The References page, generated from the site's one bibliography (``docs/references.bib``).

Pages cite inline, ``[Vaswani et al., 2017](https://arxiv.org/abs/1706.03762)``: the link is
the entry's ``url`` and the text is [`cite_text`][attention_site.pages.references.cite_text]. The
References page lists every entry with
[`references_markdown`][attention_site.pages.references.references_markdown]; a test over the built
site checks that each entry's url is linked from some page.

The BibTeX is read by ``bibtexparser`` (its LaTeX accents decoded, its names split).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["BIB", "Reference", "cite_text", "load", "references_markdown"]

BIB = Path(__file__).resolve().parents[3] / "docs" / "references.bib"
"""The site's bibliography."""


@dataclass(frozen=True)
class Reference:
    """One entry of the bibliography: what the References page prints about it."""

    key: str
    surnames: tuple[str, ...]  # "others" (BibTeX's "and others") kept as the last one
    authors: str  # as printed: "Pierre Blanchard, Desmond J. Higham and Nicholas J. Higham"
    title: str
    venue: str
    year: str
    url: str


def _field(entry: object, name: str) -> str:
    fields = getattr(entry, "fields_dict")  # noqa: B009 (bibtexparser's Entry)
    return str(fields[name].value) if name in fields else ""


def load(path: Path = BIB) -> list[Reference]:
    """Every entry of the bibliography at ``path``, in the file's order.

    Raises:
        ValueError: if a block does not parse, or an entry lacks an author, a title, a
            year or a url (each entry must be linkable).

    Examples:
        >>> from attention_site.pages.references import load
        >>> refs = {r.key: r for r in load()}
        >>> refs["vaswani2017"].url
        'https://arxiv.org/abs/1706.03762'
        >>> refs["blanchard2021"].surnames
        ('Blanchard', 'Higham', 'Higham')
    """
    import bibtexparser
    from bibtexparser.middlewares import (
        LatexDecodingMiddleware,
        SeparateCoAuthors,
        SplitNameParts,
    )

    library = bibtexparser.parse_string(  # type: ignore[attr-defined]
        path.read_text(encoding="utf-8"),
        append_middleware=[LatexDecodingMiddleware(), SeparateCoAuthors(), SplitNameParts()],
    )
    if library.failed_blocks:
        raise ValueError(f"{path}: {len(library.failed_blocks)} block(s) do not parse")
    out: list[Reference] = []
    for e in library.entries:
        missing = [f for f in ("author", "title", "year", "url") if f not in e.fields_dict]
        if missing:
            raise ValueError(f"{path}: entry {e.key!r} lacks {', '.join(missing)}")
        names = e.fields_dict["author"].value
        surnames = tuple(" ".join(n.von + n.last) for n in names)
        full = [" ".join(n.first + n.von + n.last) for n in names]
        if full[-1] == "others":
            printed = ", ".join(full[:-1]) + " and others"
        elif len(full) > 1:
            printed = ", ".join(full[:-1]) + " and " + full[-1]
        else:
            printed = full[0]
        venue = _field(e, "booktitle") or _field(e, "journal") or _field(e, "howpublished")
        if not venue and _field(e, "eprint"):
            venue = f"arXiv:{_field(e, 'eprint')}"
        if _field(e, "volume") and _field(e, "journal"):
            venue += f" {_field(e, 'volume')}"
            if _field(e, "number"):
                venue += f"({_field(e, 'number')})"
        if _field(e, "pages"):
            venue += ", " + _field(e, "pages").replace("--", "–")
        if _field(e, "note"):
            venue += f" ({_field(e, 'note')})"
        out.append(
            Reference(
                key=e.key,
                surnames=surnames,
                authors=printed,
                title=" ".join(_field(e, "title").replace("{", "").replace("}", "").split()),
                venue=venue,
                year=_field(e, "year"),
                url=_field(e, "url"),
            )
        )
    return out


def cite_text(ref: Reference) -> str:
    """The text of an inline citation: "Dao, 2023", "Milakov & Gimelshein, 2018",
    "Vaswani et al., 2017" (three authors or more; Blanchard, Higham & Higham by name).

    Examples:
        >>> from attention_site.pages.references import cite_text, load
        >>> refs = {r.key: r for r in load()}
        >>> [cite_text(refs[k]) for k in ("dao2023", "milakov2018", "vaswani2017")]
        ['Dao, 2023', 'Milakov & Gimelshein, 2018', 'Vaswani et al., 2017']
        >>> cite_text(refs["blanchard2021"])
        'Blanchard, Higham & Higham, 2021'
    """
    names = ref.surnames
    if len(names) == 1:
        who = names[0]
    elif len(names) == 2 and names[1] != "others":
        who = f"{names[0]} & {names[1]}"
    elif len(names) == 3 and "others" not in names:
        who = (
            f"{names[0]}, {names[1]} & {names[2]}" if len(set(names)) < 3 else f"{names[0]} et al."
        )
    else:
        who = f"{names[0]} et al."
    return f"{who}, {ref.year}"


def references_markdown(path: Path = BIB) -> str:
    """The References page's list: every entry, by first author and year, each with an anchor
    (``#vaswani2017``) and its link.

    Examples:
        >>> from attention_site.pages.references import references_markdown
        >>> md = references_markdown()
        >>> '<a id="vaswani2017"></a>' in md and "(https://arxiv.org/abs/1706.03762)" in md
        True
    """
    refs = sorted(load(path), key=lambda r: (r.surnames[0].lower(), r.year, r.key))
    lines = []
    for r in refs:
        where = f" *{r.venue}*." if r.venue else ""
        lines.append(
            f'- <a id="{r.key}"></a>**{cite_text(r)}.** {r.authors}. [{r.title}]({r.url}).{where}'
        )
    return "\n".join(lines)

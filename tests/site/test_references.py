"""The site's sources: one bibliography, a References page made from it, every entry cited.

Pages cite inline, ``[Vaswani et al., 2017](https://arxiv.org/abs/1706.03762)``; the link is the
bibliography entry's ``url``. A paper in ``docs/references.bib`` that no page links to is either
not used (remove it) or used without its citation (cite it where it is used).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from attention_site.pages.references import (
    BIB,
    Reference,
    cite_text,
    load,
    references_markdown,
)
from tests.built_pages import page as page_text

#: Papers issue 37 asks the site to cite (its first list) and those other chapters cite.
REQUIRED = {
    "vaswani2017": "1706.03762",
    "bahdanau2015": "1409.0473",
    "milakov2018": "1805.02867",
    "dao2022": "2205.14135",
    "dao2023": "2307.08691",
    "su2021": "2104.09864",
    "press2022": "2108.12409",
    "shazeer2019": "1911.02150",
    "ainslie2023": "2305.13245",
    "beltagy2020": "2004.05150",
    "jiang2023": "2310.06825",
    "xiao2023": "2309.17453",
    "miller2023": "evanmiller.org/attention-is-off-by-one",
    "katharopoulos2020": "2006.16236",
    "choromanski2021": "2009.14794",
    "tsai2019": "1908.11775",
    "elhage2021": "transformer-circuits.pub/2021/framework",
    "blanchard2021": "10.1093/imanum/draa038",
    "haviv2022": "2203.16634",
    "dehghani2023": "2302.05442",
    "olsson2022": "2209.11895",
    "kwon2023": "2309.06180",
    "chen2023": "2306.15595",
    "peng2023": "2309.00071",
    "raffel2020": "1910.10683",
    "zhang2019": "1910.07467",
    "shazeer2020": "2002.05202",
    "srivastava2014": "jmlr.org/papers/v15/srivastava14a",
    "touvron2023": "2302.13971",
    # issue 53's sources
    "ba2016": "1607.06450",
    "lecun1998": "10.1007/3-540-49430-8_2",
    "glorot2010": "proceedings.mlr.press/v9/glorot10a",
    "henry2020": "2010.04245",
    "shah2024": "2407.08608",
    "sun2024": "2402.17762",
    "pytorch2024safesoftmax": "github.com/pytorch/pytorch/pull/133882",
    "meta2024llama31": "github.com/meta-llama/llama-models",
}


@pytest.fixture(scope="module")
def bibliography() -> list[Reference]:
    """docs/references.bib's entries, parsed once for the module's tests."""
    return load()


def test_the_bibliography_holds_every_required_paper_with_its_link(
    bibliography: list[Reference],
) -> None:
    refs = {r.key: r for r in bibliography}
    for key, where in REQUIRED.items():
        assert key in refs, f"{key} missing from {BIB.name}"
        assert where in refs[key].url, f"{key}: {refs[key].url} does not point at {where}"


def test_every_link_is_arxiv_doi_or_the_works_own_page(bibliography: list[Reference]) -> None:
    for r in bibliography:
        assert r.url.startswith("https://"), r
        if "arxiv.org" in r.url:
            assert re.fullmatch(r"https://arxiv\.org/abs/\d{4}\.\d{4,5}", r.url), r.url
        if "doi.org" in r.url:
            assert re.fullmatch(r"https://doi\.org/10\.\d{4,}/\S+", r.url), r.url
    assert len({r.url for r in bibliography}) == len(bibliography), "two entries share a url"


def test_an_entry_without_a_url_is_refused(tmp_path: Path):
    bib = tmp_path / "x.bib"
    bib.write_text("@misc{a, author = {A, B}, title = {T}, year = {2020}}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lacks url"):
        load(bib)


def test_citation_texts_follow_the_site_form(bibliography: list[Reference]) -> None:
    refs = {r.key: r for r in bibliography}
    assert cite_text(refs["shazeer2019"]) == "Shazeer, 2019"
    assert cite_text(refs["milakov2018"]) == "Milakov & Gimelshein, 2018"
    assert cite_text(refs["haviv2022"]) == "Haviv et al., 2022"
    assert cite_text(refs["blanchard2021"]) == "Blanchard, Higham & Higham, 2021"


def _links(site: Path) -> dict[str, set[str]]:
    """Every external href of the built site, with the pages that hold it (References aside)."""
    found: dict[str, set[str]] = {}
    for page in site.rglob("*.html"):
        rel = str(page.relative_to(site))
        if rel.startswith("references/"):
            continue
        for href in re.findall(r'href="(https?://[^"]+)"', page.read_text("utf-8")):
            found.setdefault(html.unescape(href), set()).add(rel)
    return found


def test_the_references_page_lists_every_entry(
    built_site: Path, bibliography: list[Reference]
) -> None:
    page = (built_site / "references" / "index.html").read_text("utf-8")
    for r in bibliography:
        assert f'id="{r.key}"' in page, f"References has no anchor for {r.key}"
        assert f'href="{html.escape(r.url)}"' in page or f'href="{r.url}"' in page, r.key
    assert references_markdown().count("\n") + 1 == len(bibliography)


def test_every_entry_is_cited_on_a_page(built_site: Path, bibliography: list[Reference]) -> None:
    links = _links(built_site)
    uncited = [r.key for r in bibliography if r.url not in links]
    assert not uncited, f"cite these where the pages use them (or drop them): {uncited}"


FILE_NAME = re.compile(r"\d{3}_[0-9a-f]{16}\.txt")


SEED_AS_DOCUMENT = re.compile(r"\b[Ss]eed (document|file|\d{3})|\bthe seed\b|\bseed's\b")


@pytest.mark.docs
def test_pages_cite_sources_by_title_never_by_file_name(built_site: Path) -> None:
    from attention_math.examples import EXAMPLES

    offenders = []
    for html_file in sorted(built_site.rglob("*.html")):
        text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html_file.read_text(encoding="utf-8")))
        rel = html_file.relative_to(built_site)
        offenders += [f"{rel}: {m.group()}" for m in FILE_NAME.finditer(text)]
        offenders += [f"{rel}: {m.group()}" for m in SEED_AS_DOCUMENT.finditer(text)]
    assert not offenders, offenders
    for ex in EXAMPLES.values():
        text = page_text(built_site, f"examples/{ex.id}")
        assert ex.source.cite() in text, (ex.id, ex.source.cite())
    audit = page_text(built_site, "audit")
    for ex in EXAMPLES.values():
        assert ex.source.cite() in audit


def test_every_arxiv_or_doi_link_of_the_site_is_in_the_bibliography(
    bibliography: list[Reference],
) -> None:
    """The reverse rule: a paper linked from a page (or from the text the packages print) is
    listed on References, so a reader finds every source in one place."""
    root = Path(__file__).resolve().parents[2]
    listed = " ".join(r.url for r in bibliography)
    link = re.compile(r"https://(?:arxiv\.org/abs/\d{4}\.\d{4,5}|doi\.org/10\.[^\s)\]>\"']+)")
    missing = set()
    for path in [*(root / "docs").rglob("*.md"), *(root / "src").rglob("*.py")]:
        for url in link.findall(path.read_text(encoding="utf-8")):
            if url.rstrip(".,;") not in listed:
                missing.add(f"{path.relative_to(root)}: {url}")
    assert not missing, "linked but not in docs/references.bib:\n" + "\n".join(sorted(missing))


#: Where each paper of issue 37's list is used, so where it must be cited: a citation that
#: leaves the page using the result fails here, even if another page still links the paper.
CITED_WHERE_USED = {
    "vaswani2017": ("forward/formula.md", "why/scaling.md", "why/multi-head.md", "why/cost.md"),
    "bahdanau2015": ("forward/scores.md", "attention-as.md"),
    "milakov2018": ("long/online-softmax.md",),
    "dao2022": ("long/online-softmax.md", "long/flash-backward.md"),
    "dao2023": ("long/online-softmax.md", "long/flash-backward.md"),
    "su2021": ("positions/rope.md",),
    "press2022": ("positions/alibi.md",),
    "shazeer2019": ("positions/gqa.md",),
    "ainslie2023": ("positions/gqa.md",),
    "beltagy2020": ("positions/sliding-window.md",),
    "jiang2023": ("positions/sliding-window.md",),
    "xiao2023": ("positions/sinks.md",),
    "miller2023": ("positions/sinks.md",),
    "katharopoulos2020": ("long/linear-attention.md",),
    "choromanski2021": ("long/linear-attention.md",),
    "tsai2019": ("attention-as.md",),
    "elhage2021": ("attention-as.md",),
    "blanchard2021": ("why/softmax.md", "long/online-softmax.md"),
    "haviv2022": ("why/equivariance.md",),
    "dehghani2023": ("why/scaling.md", "attention-as.md"),
    "ba2016": ("attention-as.md", "why/scaling.md"),
    "lecun1998": ("why/scaling.md",),
    "glorot2010": ("why/scaling.md",),
    "henry2020": ("positions/modern-block.md", "attention-as.md"),
    "shah2024": ("long/io.md",),
    "sun2024": ("positions/sinks.md",),
    "pytorch2024safesoftmax": ("why/masks.md",),
    "meta2024llama31": ("positions/long-context.md",),
}


def test_each_paper_is_cited_on_the_pages_that_use_it(bibliography: list[Reference]) -> None:
    refs = {r.key: r for r in bibliography}
    docs = Path(__file__).resolve().parents[2] / "docs"
    assert set(CITED_WHERE_USED) <= set(REQUIRED)
    missing = [
        f"{page}: {key} ({refs[key].url})"
        for key, pages in CITED_WHERE_USED.items()
        for page in pages
        if refs[key].url not in (docs / page).read_text(encoding="utf-8")
    ]
    assert not missing, "a paper not cited where its result is used:\n" + "\n".join(missing)

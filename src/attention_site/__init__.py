"""The site's machinery: Markdown, LaTeX and HTML for the pages, figures, page builders.

It imports the learner's library, `attention_math`, never the reverse; the wheel a learner
installs (and the one the page's Python runtime loads) holds the library only.
"""

__all__: list[str] = []

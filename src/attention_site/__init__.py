"""The site's machinery: Markdown, LaTeX and HTML for the pages, figures, page builders."""

"""The site's machinery: rendering, figures and page builders (never imported by attention_math)."""

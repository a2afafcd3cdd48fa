"""The site's machinery: figures, widgets and page builders (never imported by attention_math)."""

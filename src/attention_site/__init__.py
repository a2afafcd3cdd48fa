"""The site's machinery: figures, rendering and page builders (never imported by attention_math)."""

"""The site's machinery: figures and page builders (never imported by attention_math)."""

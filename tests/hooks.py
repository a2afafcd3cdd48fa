"""The build's hooks loaded as MkDocs loads them: ``attention_site.checks.hooks``, which the
benchmarks use too (kept importable here for the tests that import ``tests.hooks``)."""

from attention_site.checks.hooks import HOOKS, load_hook

__all__ = ["HOOKS", "load_hook"]

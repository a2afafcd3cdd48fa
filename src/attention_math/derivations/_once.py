"""`attention_math._once`, where `derived_once` lives: under the core too, which uses it (the
derivations' modules import it from here as they always have)."""

from __future__ import annotations

from attention_math._once import derived_once, frozen

__all__ = ["derived_once", "frozen"]

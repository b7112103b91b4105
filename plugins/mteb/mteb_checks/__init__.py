"""Gates for the MTEB results tree, built with checks.kit: six rules, an accept action and a pre-commit hook."""

__version__ = "0.1.0"

"""An organisation's house rules for arena-checks, written against the public ``checks`` API only."""

__version__ = "0.2.0"

"""The plugins under ``plugins/`` and ``checks plugin new``. Their fixtures beyond the suite-wide
ones (tests/conftest.py) go here."""

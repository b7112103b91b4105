"""The documentation holds: its examples run, its paths and commands exist, the README tour works.
Their fixtures beyond the suite-wide ones (tests/conftest.py) go here."""

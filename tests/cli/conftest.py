"""The commands as a user runs them: options, conveniences, lazy loading, the pre-commit hooks and
the HTML reports. Their fixtures beyond the suite-wide ones (tests/conftest.py) go here."""

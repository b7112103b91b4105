"""``hfmigrate_checks``: contract, ledgers, the Hub client and the local Hub, resolution, state,
drafts, end to end. Their fixtures beyond the suite-wide ones (tests/conftest.py) go here; the
migration's commands and the client's environment are one flow, ``hfmigrate_checks.testing.migration``."""

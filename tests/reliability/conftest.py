"""One row each of docs/reliability.md: faults injected, crashes, hostile input. Their fixtures
beyond the suite-wide ones (tests/conftest.py) go here; the helpers they share are in
tests/support/reliability_fixtures.py."""

"""``tabarena_checks``: reader, index, inference, metadata, rules, process, upload, register, log and
parity with TabArena. Their fixtures beyond the suite-wide ones (tests/conftest.py) go here."""

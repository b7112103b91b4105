"""The framework's tests (``checks/``): plugins, hooks, configuration, runner, outputs, io, and the
packages' layout. Their fixtures beyond the suite-wide ones (tests/conftest.py) go here."""

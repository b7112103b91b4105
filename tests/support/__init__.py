"""What the tests share and is not a fixture: data builders, fake servers, the fixture plugins that
tests/conftest.py registers, and scripts the tests run (the TabArena driver). Imported as
``tests.support.<module>`` (pytest puts the repository root on sys.path: ``pythonpath`` in
pyproject.toml); ``toys/`` holds the toy plugins, loaded by module name (``-p toy_plugin``)."""

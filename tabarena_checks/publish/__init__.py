"""The actions that publish a method: ``process`` into a TabArena cache, ``upload``/``unpublish`` to R2,
``register`` in an arena's methods.py and ``log`` the run in BENCHMARK_LOG.md."""

"""The TabArena rules, one module per family: TA1xx ``metadata``, TA2xx ``protocol``, TA3xx ``raw``, TA4xx ``upload``,
TA5xx ``register``. They read facts the actions gathered and write nothing."""

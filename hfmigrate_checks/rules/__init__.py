"""The HF rules, one module per family: HF1xx ``contract``, HF2xx ``ledger``, HF3xx/HF4xx ``hub``, HF5xx ``drafts``.
They read the facts of :mod:`hfmigrate_checks.facts` and write nothing."""

"""The ``checks hf`` commands, one module each, so a command imports only the steps it runs.

hfmigrate_checks/cli.py declares them by name (a ``checks.LazyGroup``); each module here is
imported when its command runs or shows its help. Everything here reads; the Hub is only ever
asked through the read-only client.
"""

"""The entry point ``mteb``: rules, the ``mteb-accept`` action and ``checks precommit mteb``, each imported when asked."""

from checks import ModuleWiring

wiring = ModuleWiring(
    "mteb_checks",
    rules=("rules",),
    actions={"accept": ("mteb-accept",)},
    precommit={"mteb": ("results:hook", "Check MTEB result files (read-only; path:line:col: CODE message).")},
    hooks=("precommit-mteb",),
)
checks_rules, checks_actions, checks_commands = wiring.hooks()
checks_gates = wiring.checks_gates

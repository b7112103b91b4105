"""A second toy plugin, registered after the first, to prove verdict order does not follow load order."""

from checks import hookimpl, rule


@rule("TOY000", "toy-zero", actions=("toy",))
def zero(ctx):
    """Always passes; its code sorts first although its plugin loads last."""
    return None


@hookimpl
def checks_rules():
    return [zero]

"""A plugin with a misspelt hook name: loading it must fail and name the plugin."""

from checks import hookimpl


@hookimpl
def checks_rulez():
    return []

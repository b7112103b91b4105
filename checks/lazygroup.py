"""A click group whose commands are declared by name and imported only when one is asked for.

A group's commands each import what they run (the Hub client, the ledger importers, the
static reader); kept in one module, any of them, or only its ``--help``, would load them
all. Declared apart from their implementations (click's "lazy group"), a command's module is
imported when that command runs or shows its help, and the group's own ``--help`` lists every
command from the short help in the declaration, importing none. The ``checks`` group and the
plugins' groups (``checks hf``, ``checks tabarena``) are built on it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

import click

from checks.errors import UsageError


class LazyGroup(click.Group):
    """A click group with commands declared as ``name -> ("module:attribute", short help)``.

    The attribute is the command itself or a function that makes it, called with no argument.
    The short help is what ``--help`` of the group lists for the command until it is loaded:
    the first sentence of the command's help, as click shortens it (``tests/cli/test_cli_lazy.py``
    holds each declaration equal to its command's own, so the two cannot drift)::

        group = LazyGroup("mine", help="My tools.", lazy_commands={
            "sync": ("my_checks.commands.sync:sync_command", "Copy the results to the store."),
        })
    """

    #: command name -> ``("module:attribute", short help)``, imported when the command is asked for
    lazy_commands: Mapping[str, tuple[str, str]] = {}

    def __init__(self, *args, lazy_commands: Mapping[str, tuple[str, str]] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if lazy_commands is not None:
            self.lazy_commands = dict(lazy_commands)

    def load(self, name: str) -> click.Command:
        """Import the declared command ``name`` and add it to the group under that name."""
        module, _, attribute = self.lazy_commands[name][0].partition(":")
        made = getattr(importlib.import_module(module), attribute)
        self.add_command(made if isinstance(made, click.Command) else made(), name)
        return self.commands[name]

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy_commands and name not in self.commands:
            self.load(name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's list of commands, a declared command not loaded yet shown by its declared short help."""
        shown = [(name, self._listed(ctx, name)) for name in self.list_commands(ctx)]
        rows = [(name, command) for name, command in shown if command is not None and not command.hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in rows])

    def _listed(self, ctx: click.Context, name: str) -> click.Command | None:
        """The command ``name`` as ``--help`` lists it: a stand-in with its declared short help until it is loaded."""
        if name in self.lazy_commands and name not in self.commands:
            return click.Command(name, help=self.lazy_commands[name][1])
        return self.get_command(ctx, name)

    def add_to(self, parent: click.Group) -> None:
        """Add this group to ``parent``, unless it holds the same already (a plugin's ``checks_commands`` may be
        called twice: for one name, then for every command); refuse a name another plugin's command holds."""
        held = parent.commands.get(self.name)
        if held is None:
            parent.add_command(self)
        elif not (isinstance(held, LazyGroup) and held.lazy_commands == self.lazy_commands):
            raise UsageError(f"'checks {self.name}' is already a command; another plugin took the name")

"""A click group whose commands are declared by name and imported only when one is asked for.

A group's commands each import what they run (the Hub client, the ledger importers, the
static reader); kept in one module, any of them, or only its ``--help``, would load them
all. Declared apart from their implementations (click's "lazy group"), a command's module is
imported when that command runs or shows its help, and the group's own ``--help`` lists every
command from the short help in the declaration, importing none. It is the one way a command is
declared lazily: the ``checks`` group (its own ``run``, ``config`` and ``plugin``, and the commands
a plugin declares with :class:`checks.ModuleWiring`), ``checks precommit`` (the plugins' hooks)
and the plugins' groups (``checks hf``, ``checks tabarena``) are built on it.
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
        self.lazy_commands = dict(self.lazy_commands if lazy_commands is None else lazy_commands)

    def declare(self, commands: Mapping[str, tuple[str, str]]) -> None:
        """Declare more commands (a plugin's, through :class:`checks.ModuleWiring`), none imported.

        Declaring the same again is harmless (a plugin's ``checks_commands`` may be called twice:
        for one name, then for every command); a name another command holds is refused.
        """
        for name, declaration in commands.items():
            held = self.lazy_commands.get(name)
            if (held is not None and held != tuple(declaration)) or name in self.commands:
                where = f"{self.name} {name}" if self.name else name
                raise UsageError(f"'checks {where}' is already a command; another plugin took the name")
            self.lazy_commands[name] = tuple(declaration)

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

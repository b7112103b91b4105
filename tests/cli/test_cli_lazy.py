"""Lazy groups: a command is imported only when asked for, and its group's help cannot drift from it.

``checks``, ``checks hf``, ``checks tabarena`` and ``checks precommit`` declare their commands by name with a
short help (checks.LazyGroup; the plugins' commands and hooks through ModuleWiring's ``commands`` and
``precommit``), so ``--help`` of the
group lists them without importing them. These tests
hold every declaration to the command it names: the module and attribute exist, and the declared
short help is the one click makes from the command's own help.
"""

from __future__ import annotations

import sys

import click
import pytest
from click.testing import CliRunner

from checks import LazyGroup, UsageError, plugins
from checks.cli import App, build_cli

REGISTRY = plugins.load([])


def _lazy_groups() -> list[tuple[str, LazyGroup]]:
    """Every lazy group of the command line with the built-in plugins: the root and its lazy subgroups."""
    cli = build_cli(REGISTRY)
    ctx = click.Context(cli, obj=App(REGISTRY, None))
    groups = [("checks", cli)]
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        if isinstance(command, LazyGroup):
            groups.append((f"checks {name}", command))
    return groups


def _declared() -> list[tuple[str, LazyGroup, str]]:
    return [(path, group, name) for path, group in _lazy_groups() for name in group.lazy_commands]


def test_the_built_in_groups_are_lazy():
    assert {path for path, _ in _lazy_groups()} >= {"checks", "checks hf", "checks tabarena", "checks precommit"}


@pytest.mark.parametrize(
    ("path", "group", "name"), _declared(), ids=[f"{path} {name}" for path, _, name in _declared()]
)
def test_a_declared_short_help_is_the_commands_own(path, group, name):
    declared = group.lazy_commands[name][1]
    command = group.get_command(click.Context(group), name)
    assert command is not None and command.name == name
    assert declared == command.get_short_help_str(limit=sys.maxsize), f"`{path} {name}`: update its declaration"


@pytest.mark.parametrize("path", ["checks hf", "checks tabarena", "checks precommit"])
def test_a_group_help_reads_the_same_before_and_after_its_commands_load(path):
    group = dict(_lazy_groups())[path]
    ctx = click.Context(group, info_name=path)
    before = group.get_help(ctx)
    assert not group.commands  # listed from the declarations alone
    for name in group.lazy_commands:
        group.get_command(ctx, name)
    assert group.get_help(ctx) == before


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A module with one command and one factory, importable as ``lazytoy``, not imported yet."""
    (tmp_path / "lazytoy.py").write_text(
        "import click\n\n"
        "@click.command('hello')\n"
        "def hello():\n    '''Say hello. Then more.'''\n    click.echo('hello')\n\n"
        "def make_bye():\n"
        "    @click.command('bye')\n"
        "    def bye():\n        '''Say goodbye.'''\n        click.echo('bye')\n"
        "    return bye\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lazytoy", raising=False)
    commands = {"hello": ("lazytoy:hello", "Say hello."), "bye": ("lazytoy:make_bye", "Say goodbye.")}
    return LazyGroup("toy", lazy_commands=commands)


def test_a_lazy_group_lists_its_commands_unimported_and_imports_one_when_asked(toy):
    runner = CliRunner()
    res = runner.invoke(toy, ["--help"])
    assert res.exit_code == 0 and "hello  Say hello." in res.output and "bye    Say goodbye." in res.output
    assert "lazytoy" not in sys.modules
    res = runner.invoke(toy, ["hello"])
    assert res.exit_code == 0 and res.output == "hello\n" and "lazytoy" in sys.modules
    assert runner.invoke(toy, ["bye"]).output == "bye\n"  # a factory is called to make its command
    assert toy.list_commands(click.Context(toy)) == ["bye", "hello"]


def test_a_declaration_is_kept_once_and_a_taken_name_is_refused(toy):
    root = LazyGroup("")
    root.declare({"toy": ("lazytoy:make_toy", "Toy tools.")})
    root.declare({"toy": ("lazytoy:make_toy", "Toy tools.")})  # the hook called again: kept as it was
    assert root.lazy_commands == {"toy": ("lazytoy:make_toy", "Toy tools.")} and "lazytoy" not in sys.modules
    with pytest.raises(UsageError, match="'checks toy' is already a command; another plugin took the name"):
        root.declare({"toy": ("other:toy", "Another toy.")})
    root.add_command(click.Command("held"))
    with pytest.raises(UsageError, match="'checks held' is already a command"):
        root.declare({"held": ("other:held", "Held.")})


WIRED_CMD = """import click

@click.command("wired")
def wired():
    "Say wired."
    click.echo("wired")
"""


def test_a_plugin_declares_its_commands_through_the_wiring_and_none_is_imported(tmp_path, monkeypatch):
    """ModuleWiring(commands=...) declares top-level commands as a LazyGroup's: listed unimported, loaded when run."""
    (tmp_path / "wiredtoy").mkdir()
    (tmp_path / "wiredtoy" / "__init__.py").write_text("")
    (tmp_path / "wiredtoy" / "cmd.py").write_text(WIRED_CMD)
    (tmp_path / "wiredtoy" / "plugin.py").write_text(
        "from checks import ModuleWiring\n\n"
        "wiring = ModuleWiring('wiredtoy', commands={'wired': ('cmd:wired', 'Say wired.')})\n"
        "checks_rules, checks_actions, checks_commands = wiring.hooks()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    cli = build_cli(plugins.load(["wiredtoy.plugin"]))
    runner = CliRunner()
    res = runner.invoke(cli, ["--help"], obj={})
    assert res.exit_code == 0 and "Say wired." in res.output and "wiredtoy.cmd" not in sys.modules
    res = runner.invoke(cli, ["wired"], obj={})
    assert res.exit_code == 0 and res.output == "wired\n" and "wiredtoy.cmd" in sys.modules


def test_a_plugin_may_not_declare_a_framework_command(tmp_path, monkeypatch):
    (tmp_path / "grabtoy.py").write_text(
        "from checks import ModuleWiring\n\n"
        "wiring = ModuleWiring('grabtoy', commands={'config': ('x:y', 'Mine.')})\n"
        "checks_rules, checks_actions, checks_commands = wiring.hooks()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    cli = build_cli(plugins.load(["grabtoy"]))
    res = CliRunner().invoke(cli, ["--help"], obj={})
    assert "a plugin replaced the framework's command(s) config" in str(res.exception)

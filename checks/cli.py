"""The ``checks`` command. Plugins are loaded before click parses, so their commands and actions exist.

Exceptions end here: :func:`checks.exitcodes.exit_code_for` maps them to exit codes;
user mistakes print one ``checks: error:`` block, never a traceback.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs
import click

from checks import config_load, config_select, plugins, suggest
from checks.config_select import effective
from checks.errors import ChecksError, PluginError, UsageError
from checks.exitcodes import ExitCode, exit_code_for
from checks.io import closest_path
from checks.lazygroup import LazyGroup
from checks.model import known_codes
from checks.redact import credential_options, redact
from checks.required import check_required
from checks.visible import safe_lines


def _early_args(argv: Sequence[str]) -> tuple[list[str], str | None, list[str]]:
    """The ``-p`` values, ``--config`` and what is left for click, read before click parses (like pytest).

    ``-p NAME`` and ``--config PATH`` may come anywhere before ``--`` (``checks precommit info-py
    --config strict.toml`` too, as a pre-commit hook's ``args:`` puts them): every occurrence is
    taken out of the arguments, since the plugins and the configuration that names local ones
    must be known before the commands they add can be parsed. Two different ``--config`` values
    are refused rather than one silently winning.
    """
    values, configs, rest, i = [], [], [], 0
    while i < len(argv):
        if argv[i] == "--":
            rest += argv[i:]
            break
        plugin, width = _plugin_value(argv, i)
        if plugin is not None:
            values.append(plugin)
        else:
            path, width = _config_value(argv, i)
            if path is None:
                rest += argv[i : i + width]
            else:
                configs.append(path)
        i += width
    if len(set(configs)) > 1:
        raise UsageError(
            f"--config is given {len(configs)} times ({', '.join(configs)}): one configuration "
            f'file applies to a command; keep one (`extend = "PATH"` in it builds on another)'
        )
    return values, (configs[0] if configs else None), rest


#: the judging commands' options that may also stand before the subcommand (``checks --format json run ...``)
_HOISTED_VALUES = (
    "--select",
    "--extend-select",
    "--ignore",
    "--extend-ignore",
    "--per-file-ignores",
    "--format",
    "--output-file",
    "--color",
)
_HOISTED_FLAGS = ("-q", "--quiet", "-v", "--verbose", "--statistics", "--exit-zero")


def _hoisted(args: Sequence[str]) -> list[str]:
    """``args`` with the judging options given before the subcommand moved behind it (before a ``--``).

    They are the options of ``checks run ACTION`` and every ``checks precommit`` command, where click
    parses them; written first, as a CI template or a wrapper script may put them, they still reach
    the command. Given to a command that lacks them (``checks --select TA1 rules``), click refuses them
    naming the option.
    """
    moved, rest, i, before_command = [], [], 0, True
    while i < len(args):
        arg = args[i]
        name = arg.partition("=")[0]
        width = 2 if arg in _HOISTED_VALUES else 1
        if before_command and (name in _HOISTED_VALUES or arg in _HOISTED_FLAGS):
            moved += args[i : i + width]
        else:
            before_command = before_command and arg.startswith("-") and arg != "--"
            rest.append(arg)
            width = 1
        i += width
    cut = rest.index("--") if "--" in rest else len(rest)
    return [*rest[:cut], *moved, *rest[cut:]]


#: the environment variable naming the configuration file when no ``--config`` is given (a CI job sets it once)
CONFIG_ENV = "CHECKS_CONFIG"


def _env_config() -> str | None:
    """``$CHECKS_CONFIG``, refused when it names no file (a silently ignored variable would judge under another)."""
    value = os.environ.get(CONFIG_ENV, "").strip()
    if value and not Path(value).is_file():
        raise UsageError(
            f"environment variable {CONFIG_ENV}={value!r}: no such file; name a rules.toml, .checks.toml or "
            f"pyproject.toml, or unset it to use the nearest configuration"
        )
    return value or None


def _plugin_value(argv: Sequence[str], i: int) -> tuple[str | None, int]:
    """The plugin named by ``-p NAME``, ``-pNAME`` or ``-p=NAME`` at ``argv[i]`` and how many arguments it spans.

    ``(None, 1)`` when ``argv[i]`` is something else; a ``-p`` with nothing after it is left to click.
    """
    arg = argv[i]
    if arg == "-p" and i + 1 < len(argv):
        return argv[i + 1], 2
    if arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--"):
        return arg[2:].removeprefix("="), 1
    return None, 1


def _config_value(argv: Sequence[str], i: int) -> tuple[str | None, int]:
    """The path of ``--config PATH`` or ``--config=PATH`` at ``argv[i]`` and how many arguments it spans.

    ``(None, 1)`` when ``argv[i]`` is something else; a ``--config`` with nothing after it is left to click.
    """
    arg = argv[i]
    if arg == "--config" and i + 1 < len(argv):
        return argv[i + 1], 2
    if arg.startswith("--config="):
        return arg.partition("=")[2], 1
    return None, 1


#: the selection options every ``checks run`` and ``checks precommit`` command takes (the config keys' names)
SELECTION_OPTIONS = ("select", "extend_select", "ignore", "extend_ignore", "per_file_ignores")


def selection_params() -> list[click.Option]:
    """``--select``, ``--extend-select``, ``--ignore``, ``--extend-ignore``, ``--per-file-ignores``."""
    codes = "comma-separated rule codes or prefixes; repeatable"
    helps = (
        ("--select", "CODES", f"Evaluate only these rules, replacing every `select` of the configuration ({codes})."),
        ("--extend-select", "CODES", f"Add to the selection ({codes})."),
        ("--ignore", "CODES", f"Skip these rules too, added to the configuration's `ignore` ({codes})."),
        ("--extend-ignore", "CODES", f"Skip these rules too ({codes})."),
        (
            "--per-file-ignores",
            "GLOB:CODES",
            "Drop findings of CODES in files matching GLOB (relative to the working directory); repeatable.",
        ),
    )
    return [click.Option([flag], multiple=True, metavar=metavar, help=text) for flag, metavar, text in helps]


def global_params() -> list[click.Option]:
    """``-p``, ``--config`` and ``--no-local-plugins`` as options of a subcommand too: :func:`main` takes them out
    of the arguments wherever they stand, so these never receive a value; they are here so the subcommand's
    ``--help`` lists them and shell completion offers them after it (``info-py --c<TAB>``: ``--color``,
    ``--config``)."""
    after = "; read before the command, wherever it stands"
    return [
        click.Option(["-p", "plugins"], multiple=True, metavar="NAME", expose_value=False,
                     shell_complete=_complete_plugins, help=f"Load plugin NAME; -p no:NAME blocks it{after}."),
        click.Option(["--config"], metavar="PATH", expose_value=False, type=click.Path(dir_okay=False),
                     help=f"The configuration file to use{after}."),
        click.Option([NO_LOCAL_FLAG], is_flag=True, expose_value=False,
                     help=f"Load none of the configuration's checks_plugins{after}."),
    ]  # fmt: skip


def pop_selection(options: dict) -> dict:
    """Take the selection options out of a command's parameters, as keyword arguments for config.overridden."""
    raw = {name: options.pop(name, ()) or () for name in SELECTION_OPTIONS}

    def split(values) -> list[str]:
        return [part.strip() for value in values for part in value.split(",") if part.strip()]

    return {
        "select": split(raw["select"]) if raw["select"] else None,
        "extend_select": split(raw["extend_select"]),
        "ignore": split(raw["ignore"]) if raw["ignore"] else None,
        "extend_ignore": split(raw["extend_ignore"]),
        "per_file_ignores": list(raw["per_file_ignores"]),
    }


class App:
    """What every command needs: the registry and the global options."""

    def __init__(self, registry: plugins.Registry, config_path: str | None, argv: Sequence[str] = ()):
        self.registry = registry
        self.config_path = config_path
        #: the arguments ``checks`` was started with (an action's plan can show how to run it again)
        self.argv = tuple(argv)

    def config(self, decision_log: str | None = None, selection: dict | None = None, *, near: Path | None = None):
        """The configuration file's settings, checked against the loaded rules, with the command line's applied.

        The file is ``--config``, else the one nearest ``near`` (a directory; default the working one).
        """
        path = Path(self.config_path) if self.config_path else None
        cfg = config_load.load(path, cwd=near or Path.cwd(), sections=self.registry.config_sections)
        # the actions' arenas are needed only for a section no plugin declares (it saves importing every action)
        declared = self.registry.config_sections
        arenas = self.registry.arenas if set(cfg.arenas) - set(declared) else declared
        config_select.check_codes(cfg, known_codes(self.registry.rules.values()), arenas, self.registry.blocked)
        if selection:
            cfg = config_select.overridden(
                cfg,
                **selection,
                codes=known_codes(self.registry.rules.values()),
                required=self._required(cfg, selection),
            )
        if decision_log:
            cfg = attrs.evolve(cfg, decision_log=decision_log, decision_log_from="--decision-log")
        return cfg

    def _required(self, cfg, selection: dict) -> dict[str, str]:
        """code -> name of the rules required under ``cfg``, which no option may ignore; looked up only when
        an option ignores something (every rule is asked)."""
        if not (selection.get("ignore") or selection.get("extend_ignore") or selection.get("per_file_ignores")):
            return {}
        return {code: rule.name for code, rule in self.registry.rules.items() if effective(rule, cfg, None)[1]}

    def configs(self, selection: dict | None = None):
        """``path -> Config`` for the files a command judges: ``--config`` for every file when given, else the
        configuration nearest each file, as ruff finds a file's own (each file read and checked once)."""
        if self.config_path:
            one = self.config(selection=selection)
            return lambda path: one
        by_dir: dict[Path, object] = {}
        by_file: dict[Path | None, object] = {}
        seen: dict[Path, Path | None] = {}  # directory -> its nearest configuration, for this command only

        def plugin_ids(entries) -> set:
            return {
                str((Path(base) / entry).resolve()) if entry.endswith(".py") else (entry, base)
                for entry, base in entries
            }

        def nearest(path: str | None):
            where = Path(path).resolve().parent if path else Path.cwd()
            if where not in by_dir:
                found = config_load.find(where, seen)
                if found not in by_file:
                    cfg = self.config(selection=selection, near=where)
                    base = str(found.resolve().parent) if found is not None else ""
                    wanted = plugin_ids((entry, base) for entry in cfg.checks_plugins)
                    off = self.registry.local_off  # turned off on purpose: none runs, whichever file names them
                    if not off and wanted - plugin_ids(_local_plugins(None)):  # its rules would silently not run
                        raise UsageError(
                            f"{found}: checks_plugins {', '.join(cfg.checks_plugins)} are not loaded for {path}: "
                            f"local plugins come from the configuration of the working directory; run checks from "
                            f"{found.parent}, or list them in the configuration there"
                        )
                    by_file[found] = cfg
                by_dir[where] = by_file[found]
            return by_dir[where]

        return nearest


def quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush cannot fail again (and print a traceback)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _abort_on_sigterm() -> None:
    """SIGTERM (``kill``, a CI job's timeout, a supervisor) stops a command as Ctrl-C does.

    Python's default for SIGTERM ends the process on the spot: no ``finally`` block runs, so
    the temporary directories of an upload's staging or a Hub download (``checks run``, and
    ``checks hf inspect`` or ``resolve`` reading the Hub) would stay in /tmp. As a
    KeyboardInterrupt the command unwinds, removes them, keeps the previous state of what it
    was replacing, and ends as ``checks: aborted`` (exit 2). Installed by every command the
    ``checks`` script runs; an in-process ``main(argv)`` leaves its host's signals alone.
    """
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # checks.__main__ ended start-up quietly till now
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def registry_of(ctx: click.Context) -> plugins.Registry:
    """The loaded plugins' registry: on the root group, so shell completion (which runs no group's callback,
    hence builds no :class:`App`) finds it too."""
    return ctx.find_root().command.registry


class _ChecksGroup(LazyGroup):
    """The ``checks`` group: plugins' commands added on first need; one missing because its plugin is not loaded says so.

    The framework's own commands (run, rules, rule, config, plugins) are answered without
    calling ``checks_commands``, so ``checks rules`` asks no plugin for its commands.
    Another name calls the hook with that name (a plugin may add just that command);
    ``--help`` and shell completion call it with ``None``, for every command.

    It is a :class:`~checks.lazygroup.LazyGroup`: ``run``, ``plugin`` and ``config`` are declared
    apart from their implementations in :attr:`lazy_commands`, and a plugin wired with
    :class:`checks.ModuleWiring` declares its own the same way (:meth:`declare`), so each is
    imported only when asked for (``checks rules`` never loads the runner, the judge or the
    output formats) and ``checks --help`` lists them all unimported. No plugin may take a
    framework command's name.
    """

    registry: plugins.Registry | None = None
    lazy_commands = {
        "run": ("checks.run_cli:run_group", "Run ACTION after its rules pass (checks run --help lists actions)."),
        "plugin": (
            "checks.scaffold:plugin_group",
            "Start a plugin of your own: `checks plugin new NAME` writes a working package.",
        ),
        "config": (
            "checks.config_view:config_command",
            "Print the resolved configuration and the file it came from (for FILE: the one `checks precommit` "
            "uses for it); exit 2 if it is invalid.",
        ),
    }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: the names the plugins were asked for (None: every command)
        self._asked: set[str | None] = set()
        #: the framework's own commands, as they were before any plugin added one
        self._framework: dict[str, click.Command] = {}

    def add_plugin_commands(self, name: str | None) -> None:
        """Call every plugin's ``checks_commands`` hook with this group, for ``name`` (None: all), once each."""
        if self.registry is None or None in self._asked or name in self._asked:
            return
        if not self._asked:
            self._framework = dict(self.commands)
        self._asked.add(name)
        self.registry.pm.hook.checks_commands(cli=self, name=name)
        replaced = sorted(
            {n for n, command in self._framework.items() if self.commands.get(n) is not command}
            | {n for n in self.lazy_commands if n in self.commands and n not in self._framework}
        )
        if replaced:
            raise PluginError(
                f"hook checks_commands: a plugin replaced the framework's command(s) "
                f"{', '.join(replaced)}; choose another name"
            )

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.add_plugin_commands(None)
        return super().list_commands(ctx)

    def declare(self, commands) -> None:
        taken = sorted(set(commands) & ({*self._framework, *type(self).lazy_commands} | set(self.commands)))
        if taken:
            raise PluginError(
                f"hook checks_commands: a plugin replaced the framework's command(s) {', '.join(taken)}; "
                f"choose another name"
            )
        super().declare(commands)

    def load(self, name: str) -> click.Command:
        command = super().load(name)
        if name in type(self).lazy_commands:
            self._framework[name] = command
        return command

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name not in self.lazy_commands:
            self.add_plugin_commands(name)
        command = super().get_command(ctx, name)
        if command is None and not ctx.resilient_parsing and self.registry is not None:
            refuse_unloaded(self.registry, f"no command {name!r}", command=(name,))
        return command


def refuse_unloaded(registry: plugins.Registry, what: str, **wanted) -> None:
    """Raise a usage error naming the unloaded plugins that would provide what is missing, if any."""
    reasons = plugins.unloaded_providers(registry, **wanted)
    if reasons:
        raise UsageError(f"{what}: {'; '.join(reasons)}")


def echo_error(text: str, err: bool = False) -> None:
    """An error block: redacted, control characters from file names shown visibly, no line a CI command."""
    click.echo(safe_lines(redact(text)), err=err)


def build_cli(registry: plugins.Registry) -> click.Group:
    """The ``checks`` group with the framework's own commands (run, rules, rule, config, plugins).

    Each command is made by its own function, closed over ``registry``; the plugins add theirs
    through checks_commands when one of theirs is asked for (:class:`_ChecksGroup`).
    """

    @click.group(cls=_ChecksGroup, context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(plugins._own_version(), "--version", prog_name="arena-checks", message="%(prog)s %(version)s")
    @click.option(
        "-p",
        "plugin_args",
        multiple=True,
        metavar="NAME",
        help="Load plugin NAME (entry point or module); -p no:NAME blocks it. Accepted after the subcommand too.",
        shell_complete=_complete_plugins,
    )
    @click.option(
        "--config",
        "config_path",
        default=None,
        metavar="PATH",
        help="rules.toml to use (default: the nearest one from the working directory). "
        "Accepted after the subcommand too.",
    )
    @click.option(
        NO_LOCAL_FLAG,
        is_flag=True,
        expose_value=False,
        help=f"Load none of the configuration's checks_plugins (also ${NO_LOCAL_ENV}=1). Accepted after the "
        "subcommand too.",
    )
    @click.pass_context
    def cli(ctx: click.Context, plugin_args, config_path):
        """Gate benchmark publishing actions behind rules. See `checks rules` and `checks rule CODE`."""
        start = ctx.obj or {}  # main() hands the arguments and --config (taken out of them, wherever it was) in as obj
        ctx.obj = App(registry, start.get("config") or config_path, argv=start.get("argv", ()))

    cli.registry = registry
    for command in (_rules_command(registry), _rule_command(registry), _plugins_command(registry)):
        cli.add_command(command)
    return cli  # run, config and the plugins' commands are added when first needed (_ChecksGroup.get_command)


def _rules_command(registry: plugins.Registry) -> click.Command:
    """``checks rules``: every loaded rule with its severity after the configuration."""

    @click.command("rules")
    @click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table")
    @click.pass_obj
    def rules_cmd(app: App, output_format):
        """List every rule: code, name, severity (after the configuration), actions, plugin."""
        config = app.config()
        rules = [(r, *effective(r, config, None)) for r in registry.rules.values()]
        ignore = {code for layer in config.layers(None) for code in layer.ignore}
        for rule, severity, required in rules:  # refused as `checks config` and every run refuse it (exit 2)
            if required:
                check_required(rule, severity, ignore, config)
        click.echo(_rules_json(rules) if output_format == "json" else _rules_table(rules))

    return rules_cmd


def _rules_json(rules: Sequence[tuple]) -> str:
    """``checks rules --format json``: one object per ``(rule, severity, required)``, the default severity beside."""
    return json.dumps(
        [
            {
                "code": r.code,
                "name": r.name,
                "severity": severity.value,
                "default_severity": r.severity.value,
                "actions": list(r.actions),
                "required": required,
                "plugin": r.plugin,
                "summary": r.summary,
                "group": r.group,
            }
            for r, severity, required in rules
        ],
        indent=2,
    )


def _rules_table(rules: Sequence[tuple]) -> str:
    """``checks rules``: aligned columns, a changed severity with its default, ``*`` on required rules."""
    rows = [("CODE", "NAME", "SEVERITY", "ACTIONS", "PLUGIN")]
    for r, severity, required in rules:
        shown = severity.value if severity is r.severity else f"{severity.value} (default {r.severity.value})"
        rows.append((r.code + ("*" if required else ""), r.name, shown, ",".join(r.actions), r.plugin))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join([*lines, "(* required: cannot be ignored, only waived)"])


def _rule_command(registry: plugins.Registry) -> click.Command:
    """``checks rule CODE``: one rule explained, found by code or by name; ``--all`` every rule, as ruff's."""

    @click.command("rule")
    @click.argument("code", required=False, shell_complete=_complete_rules)
    @click.option("--all", "every", is_flag=True, help="Explain every rule, ordered by code.")
    @click.option(
        "--format",
        "output_format",
        type=click.Choice(["markdown", "json"]),
        default="markdown",
        show_default=True,
        help="Markdown text, or JSON (one object; a list with --all).",
    )
    def rule_cmd(code, every, output_format):
        """Explain rule CODE (or name): what it does, why, a failing and a passing example."""
        if every == bool(code):
            raise UsageError("checks rule: name one rule (checks rule TA201) or give --all, not both or neither")
        members = (
            []
            if every
            else sorted((r for r in registry.rules.values() if r.group == code.upper()), key=lambda r: r.code)
        )
        if members and code.upper() not in registry.rules:
            if output_format == "json":
                click.echo(json.dumps([_rule_json(rule) for rule in members], indent=2))
            else:
                click.echo(_group_explained(code.upper(), members), nl=False)
            return
        chosen = sorted(registry.rules.values(), key=lambda r: r.code) if every else [_find_rule(registry, code)]
        if output_format == "json":
            rows = [_rule_json(rule) for rule in chosen]
            click.echo(json.dumps(rows if every else rows[0], indent=2))
        else:
            click.echo("\n".join(rule.explain() for rule in chosen), nl=False)

    return rule_cmd


def _group_explained(group: str, members: Sequence) -> str:
    """``checks rule GROUP``: what a group code stands for (its rules), as markdown."""
    lines = [
        f"# {group} (a group of {len(members)} rules)",
        "",
        f"Selecting, ignoring, waiving or setting {group} covers each of these rules; `checks rule CODE` explains one.",
        "",
    ]
    return "\n".join([*lines, *(f"- {r.code} {r.name}: {r.summary}" for r in members)]) + "\n"


def _find_rule(registry: plugins.Registry, code: str):
    """The rule named by code (any case) or name; an unknown one is a usage error with the closest codes and names."""
    rule = registry.rules.get(code.upper()) or {r.name: r for r in registry.rules.values()}.get(code)
    if rule is not None:
        return rule
    names = [*registry.rules, *(r.name for r in registry.rules.values())]
    close = suggest.closest(code.upper(), registry.rules, n=3, prefix_first=True)
    close += [n for n in suggest.closest(code, names, n=3) if n not in close]
    hint = suggest.hint(close[:3], after=" ")
    raise UsageError(f"unknown rule {code!r}.{hint} (`checks rules` lists the codes)")


def _rule_json(rule) -> dict:
    """One rule for ``checks rule --format json``: its identity and the text ``checks rule`` explains."""
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity.value,
        "actions": list(rule.actions),
        "plugin": rule.plugin,
        "summary": rule.summary,
        "explanation": rule.explain(),
    }


def _complete_plugins(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of ``-p``: each loaded plugin's name, and ``no:NAME`` to block it."""
    names = sorted(registry_of(ctx).infos)
    return [value for name in names for value in (name, f"no:{name}") if value.startswith(incomplete)]


def complete_arenas(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of ``--arena``: the arenas the loaded plugins declare."""
    return sorted(arena for arena in registry_of(ctx).arenas if arena.startswith(incomplete))


def _complete_rules(ctx: click.Context, param: click.Parameter, incomplete: str) -> list:
    """Shell completion of a rule code or name: every loaded rule's, with its summary as the help."""
    rules = registry_of(ctx).rules.values()
    return [
        click.shell_completion.CompletionItem(value, help=rule.summary)
        for rule in sorted(rules, key=lambda r: r.code)
        for value in (rule.code, rule.name)
        if value.lower().startswith(incomplete.lower())
    ]


def _plugins_command(registry: plugins.Registry) -> click.Command:
    """``checks plugins``: the loaded plugins, where they come from and the hooks they implement."""

    @click.command("plugins")
    @click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table")
    def plugins_cmd(output_format):
        """List loaded plugins: name, distribution, version, hooks."""
        infos = list(registry.infos.values())
        if output_format == "json":
            click.echo(
                json.dumps(
                    [
                        {
                            "name": i.name,
                            "module": i.module,
                            "distribution": i.distribution,
                            "version": i.version,
                            "hooks": list(i.hooks),
                        }
                        for i in infos
                    ],
                    indent=2,
                )
            )
            return
        for i in infos:
            click.echo(
                f"{i.name}  {i.distribution or '-'} {i.version or '-'}  module={i.module}  hooks={','.join(i.hooks)}"
            )

    return plugins_cmd


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (the ``checks`` script); returns (and, without ``argv``, exits with) the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # answered before loading any plugin: the cheapest command stays cheap
        click.echo(f"arena-checks {plugins._own_version()}")
        return _finish(ExitCode.OK, argv)
    try:
        _run(args, own_process=argv is None)
        code = ExitCode.OK
    except (SystemExit, Exception) as exc:
        code = _exit_code(exc)
    return _finish(code, argv)


def _run(args: list[str], *, own_process: bool) -> None:
    """Refuse credentials given as options, load the plugins the arguments and configuration name, run the command.

    ``own_process``: the script owns its process, so SIGTERM is its to handle (:func:`_abort_on_sigterm`).
    """
    bad = credential_options(args)
    if bad:
        raise UsageError(
            f"{', '.join(bad)}: credentials are never accepted as command-line options "
            f"(they end up in shell history and process lists); set them in the environment instead"
        )
    plugin_args, config_path, args = _early_args(args)
    config_path = config_path or _env_config()
    args = _hoisted(args)
    local_off, args = _local_plugins_off(args)
    registry = plugins.load(plugin_args, local=[] if local_off else _local_plugins(config_path))
    registry.local_off = local_off
    cli = build_cli(registry)
    if own_process:
        _abort_on_sigterm()
    again = ("--config", config_path, *args) if config_path else tuple(args)  # how to run the command again
    cli.main(args, prog_name="checks", standalone_mode=False, obj={"argv": again, "config": config_path})


def _exit_code(exc: BaseException) -> int:
    """The exit code for what ended a command: one ``checks: error:`` block for a user's mistake, first.

    click's own exits keep their codes; its usage errors, the framework's errors and a module
    missing from the light install are user mistakes; anything else is a bug, printed with its
    traceback (this runs inside the ``except`` that caught ``exc``).
    """
    if isinstance(exc, SystemExit):
        return exc.code if isinstance(exc.code, int) else (ExitCode.OK if exc.code is None else ExitCode.USAGE_ERROR)
    if isinstance(exc, click.exceptions.Exit):
        return exc.exit_code
    if isinstance(exc, click.Abort):
        echo_error("checks: aborted", err=True)
        return ExitCode.USAGE_ERROR
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):  # a bare group (`checks`, `checks hf`): its help
        click.echo(exc.format_message())
        return ExitCode.USAGE_ERROR
    if isinstance(exc, click.exceptions.NoSuchCommand):
        echo_error(f"checks: error: {_no_such_command(exc)}", err=True)
        return ExitCode.USAGE_ERROR
    if isinstance(exc, click.ClickException):
        hint = _closest_choice(exc) or _closest_path(exc)
        echo_error(f"checks: error: {_one_line_choices(exc.format_message())}{hint}", err=True)
        return ExitCode.USAGE_ERROR
    error = exc if isinstance(exc, ChecksError) else _missing_extra(exc)
    if error is not None:
        echo_error(f"checks: error: {error}", err=True)
        return exit_code_for(error)
    import traceback  # noqa: PLC0415 - internal errors only; traceback would load with every command

    echo_error(f"checks: internal error: {type(exc).__name__}: {exc}\n{traceback.format_exc()}", err=True)
    return exit_code_for(exc)


def _one_line_choices(message: str) -> str:
    """click lists a missing option's choices one per tab-indented line, which the error block would show as literal
    ``\\t``: ``Missing option '--format'. Choose from: csv, markdown, parquet`` instead."""
    return re.sub(r":?\s*\n\t", lambda m: ": " if m[0].startswith(":") else " ", message)


def _closest_choice(exc: click.ClickException) -> str:
    """For a value a choice option refused, in any command (the plugins' too): `` Did you mean 'json'?``.

    click lists the valid choices but not the one meant; its message starts with the refused
    value's repr, which is read back here, the one place every command's errors pass.
    """
    param = getattr(exc, "param", None)
    if not isinstance(exc, click.BadParameter) or not isinstance(getattr(param, "type", None), click.Choice):
        return ""
    match = re.match(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*") is not""", exc.message)
    if match is None:
        return ""
    return suggest.did_you_mean(str(ast.literal_eval(match[1])), [str(c) for c in param.type.choices], after=" ")


def _closest_path(exc: click.ClickException) -> str:
    """For a path argument or option that is not there, in any command: `` Did you mean 'runs/data'?``."""
    param = getattr(exc, "param", None)
    if not isinstance(exc, click.BadParameter) or not isinstance(getattr(param, "type", None), click.Path):
        return ""
    match = re.match(r"""\w+ ('(?:[^'\\]|\\.)*') does not exist""", exc.message)
    close = closest_path(ast.literal_eval(match[1])) if match else None
    return suggest.hint([close], after=" ")


def _no_such_command(exc: click.exceptions.NoSuchCommand) -> str:
    """The one place every group's unknown command is answered: the closest names and all of them.

    click suggests only among the commands a group already holds, and ``checks``, ``checks run``
    and ``checks precommit`` fill theirs on demand; so the group is asked for its full list here.
    """
    group, ctx = exc.ctx.command if exc.ctx else None, exc.ctx
    names = group.list_commands(ctx) if isinstance(group, click.Group) else []
    hint = suggest.did_you_mean(exc.command_name, names, n=2, after=" ")
    where = f"`{ctx.command_path} --help`" if ctx else "`checks --help`"
    return f"No such command {exc.command_name!r}.{hint} ({where} lists {', '.join(names) or 'none'})"


#: turns off the configuration's ``checks_plugins`` (like pytest's ``--noconftest``); the environment's
#: variable does the same for a hook or a CI job
NO_LOCAL_FLAG, NO_LOCAL_ENV = "--no-local-plugins", "CHECKS_NO_LOCAL_PLUGINS"


def _local_plugins_off(args: list[str]) -> tuple[bool, list[str]]:
    """Whether local plugins are off (``--no-local-plugins`` before ``--``, or $CHECKS_NO_LOCAL_PLUGINS), and the
    arguments without the flag: it is read before the plugins load, as ``-p`` is."""
    end = args.index("--") if "--" in args else len(args)
    flagged = NO_LOCAL_FLAG in args[:end]
    rest = [a for a in args[:end] if a != NO_LOCAL_FLAG] + args[end:]
    env = os.environ.get(NO_LOCAL_ENV, "").strip().lower() in ("1", "true", "yes")
    return flagged or env, rest


def _local_plugins(config_path: str | None) -> list[tuple[str, str]]:
    """``checks_plugins`` of the configuration that will apply, read before the plugins load."""
    path = Path(config_path) if config_path else config_load.find(Path.cwd())
    return config_load.local_plugins(path) if path is not None else []


def _missing_extra(exc: Exception) -> ChecksError | None:
    """A module left out by the light install (an extra's dependency) is a user's fix, not a bug."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    from checks import extras  # noqa: PLC0415 - error path only; it reads the installed distributions' metadata

    top = exc.name.partition(".")[0]
    return extras.missing_error("this command", [top]) if extras.providers(top) else None


def _finish(code: int, argv: Sequence[str] | None) -> int:
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):  # what was done is done: the exit code stays (docs/cli.md)
        quiet_stdout()
    if argv is None:
        raise SystemExit(int(code))
    return int(code)

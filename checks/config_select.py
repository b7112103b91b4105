"""Selection questions asked of a loaded configuration: which rules run, at what severity, and what it may name.

ruff's selection: the file's layers, then the command line's options stacked on top
(:func:`overridden`); every code the configuration names must be one a loaded plugin
defines (:func:`check_codes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from checks import io
from checks.config_model import CONFIG_NAME, MAX_CONFIG_BYTES, SELECTOR, Config, Layer, PerFileIgnore
from checks.config_parse import with_line
from checks.errors import ConfigError, UsageError
from checks.globs import GlobError, compile_glob
from checks.model import Rule, Severity


def is_selected(code: str, layers: Iterable[Layer], group: str | None = None) -> bool:
    """Whether ``code`` (of ``group``) is selected after every layer, the first at the bottom (ruff's rule selection)."""
    selected = False
    for layer in layers:
        verdict = layer.decide(code, group)
        if layer.select is not None:
            selected = bool(verdict)
        elif verdict is not None:
            selected = verdict
    return selected


def effective(rule: Rule, config: Config, arena: str | None) -> tuple[Severity, bool]:
    """The rule's severity and required flag after the configuration (global ``[rules]``, then the arena's)."""
    severity, required = rule.severity, rule.required
    tables = (config.rules, config.arena(arena).rules)
    # the group's settings first, so that the rule's own override them
    for settings in (table.get(name) for table in tables for name in reversed(rule.names)):
        if settings is not None:
            severity = settings.severity or severity
            required = required or settings.required
    return severity, required


def overridden(
    config: Config,
    *,
    select: Sequence[str] | None = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] | None = None,
    extend_ignore: Sequence[str] = (),
    per_file_ignores: Sequence[str] = (),
    codes: Iterable[str] = (),
    required: Mapping[str, str] | None = None,
) -> Config:
    """``config`` with the command line's selection options as its last layer, as ruff stacks its own.

    ``--select`` replaces everything the file (and its arena tables) selected; ``--extend-select``
    adds and ``--ignore``/``--extend-ignore`` remove on top of it, the most specific selector of
    the layer winning; ``--per-file-ignores`` adds to the file's. Values are checked against
    ``codes``; a problem raises :class:`UsageError` naming the option. Each option given is
    noted in ``overrides`` (``--select=TA1``), which the decision record and ``checks config`` show.
    ``required`` (code -> name) are the rules no option may ignore: naming one is refused here, with
    the option's name, rather than later as if the file had done it.
    """
    codes = sorted(codes)
    layer, notes = _command_line_layer(
        codes, select=select, extend_select=extend_select, ignore=ignore, extend_ignore=extend_ignore
    )
    required = required or {}
    for option, values in (("--ignore", ignore or ()), ("--extend-ignore", extend_ignore)):
        _refuse_required(option, values, required)
    changes: dict[str, Any] = {}
    if layer != Layer("command line"):
        changes["overlays"] = (*config.overlays, layer)
    if per_file_ignores:
        extra = [_per_file_ignore(spec, codes, required) for spec in per_file_ignores]
        notes += [f"--per-file-ignores={entry.glob}:{','.join(entry.codes)}" for entry in extra]
        changes["per_file_ignores"] = (*config.per_file_ignores, *extra)
    if not changes:
        return config
    return attrs.evolve(config, overrides=(*config.overrides, *notes), **changes)


def _command_line_layer(
    codes: Sequence[str],
    *,
    select: Sequence[str] | None,
    extend_select: Sequence[str],
    ignore: Sequence[str] | None,
    extend_ignore: Sequence[str],
) -> tuple[Layer, list[str]]:
    """The selection options as one layer (``--ignore`` and ``--extend-ignore`` together) and a note per option given.

    An empty ``--select`` is refused: it would select no rule, and an empty gate is never a pass.
    """
    if select is not None and not select:
        raise UsageError("--select: an empty list selects no rule; an empty gate is never a pass")
    given = {
        "--select": select or (),
        "--extend-select": extend_select,
        "--ignore": ignore or (),
        "--extend-ignore": extend_ignore,
    }
    checked = {option: _checked(option, values, codes) for option, values in given.items() if values}
    layer = Layer(
        "command line",
        select=checked.get("--select"),
        extend_select=checked.get("--extend-select", ()),
        ignore=(*checked.get("--ignore", ()), *checked.get("--extend-ignore", ())),
    )
    return layer, [f"{option}={','.join(values)}" for option, values in checked.items()]


def _refuse_required(option: str, values: Sequence[str], required: Mapping[str, str]) -> None:
    """A command-line option naming a required rule by its code is refused, as the same key in a file is."""
    for value in values:
        if value in required:
            raise UsageError(
                f"{option}: {value} ({required[value]}) is a required rule and cannot be ignored; "
                f"leave it out of {option.split()[0]}, or add a [[waivers]] entry with a reason, owner "
                f"and expiry to the configuration"
            )


def _checked(option: str, values: Sequence[str], codes: Sequence[str]) -> tuple[str, ...]:
    """``values`` of a selection option, each a selector (``ALL``, a code or a prefix) that matches a loaded rule.

    Checked apart from the file's keys (:func:`check_codes`) because the error names the option, not a key path.
    """
    for value in values:
        if not SELECTOR.match(value):
            raise UsageError(f"{option}: expected 'ALL' or a rule code or prefix like 'TA' or 'TA101' (got {value!r})")
        if _unknown_selector(value, codes):
            raise UsageError(f"{option}: {value!r} matches no rule code (`checks rules` lists them)")
    return tuple(values)


def _per_file_ignore(spec: str, codes: Sequence[str], required: Mapping[str, str]) -> PerFileIgnore:
    """One ``--per-file-ignores GLOB:CODES`` value, its glob relative to the working directory."""
    glob, sep, listed = spec.rpartition(":")
    if not sep or not glob.strip() or not listed.strip():
        raise UsageError(f"--per-file-ignores {spec!r}: expected GLOB:CODE[,CODE...], e.g. 'tests/*.py:TA110'")
    _refuse_required(f"--per-file-ignores {spec}", listed.split(","), required)
    try:
        compile_glob(glob)
    except GlobError as exc:
        raise UsageError(f"--per-file-ignores {spec!r}: the glob {glob!r} cannot be matched: {exc}") from None
    return PerFileIgnore(glob, _checked(f"--per-file-ignores {glob}", listed.split(","), codes), str(Path.cwd()))


def _unknown_selector(selector: str, codes: Iterable[str]) -> bool:
    return selector != "ALL" and not any(code.startswith(selector) for code in codes)


def check_codes(config: Config, codes: Iterable[str], arenas: Iterable[str], blocked: Iterable[str] = ()) -> None:
    """Refuse a configuration that names a rule or arena nothing loaded defines, or selects nothing.

    A typo in ``select`` would otherwise drop every optional gate without a word, and a typo
    in ``ignore``, ``[rules.X]`` or a waiver would keep a rule the user meant to change.
    Every problem is listed with its key path; raises :class:`ConfigError`.
    """
    codes, blocked = sorted(codes), sorted(blocked)
    problems = [
        *_selector_problems("select", config.select, codes),
        *_selector_problems("extend-select", config.extend_select, codes),
        *_selector_problems("ignore", config.ignore, codes),
        *_selector_problems("extend-ignore", config.extend_ignore, codes),
        *(
            problem
            for entry in config.per_file_ignores
            for problem in _selector_problems(f"per-file-ignores.{entry.glob!r}", entry.codes, codes)
        ),
        *_rule_key_problems("rules", config.rules, codes),
        *_arena_problems(config.arenas, codes, sorted(set(arenas))),
        *(
            f"waivers[{i}].rule: no rule has the code {waiver.rule!r}"
            for i, waiver in enumerate(config.waivers)
            if waiver.rule not in codes
        ),
    ]
    if problems:
        hint = "`checks rules` lists the loaded rules"
        if blocked:
            hint += f"; blocked with -p no:NAME: {', '.join(blocked)}"
        where = config.path or CONFIG_NAME
        text = _own_text(config)
        raise ConfigError(
            "\n".join(with_line(f"{where}: {config.key(p)}", text, where) for p in problems) + f"\n({hint})"
        )


def _own_text(config: Config) -> str:
    """The text of the file ``config`` was read from, to place an error at its line; empty for the defaults
    and for a file built on others with ``extend`` (an entry may come from either file)."""
    if not config.path or config.extends or not Path(config.path).is_file():
        return ""
    try:
        return io.read_text(config.path, limit=MAX_CONFIG_BYTES, what="a rules.toml")
    except io.ReadError:
        return ""


def _selector_problems(key: str, values: Iterable[str] | None, codes: Sequence[str]) -> list[str]:
    """What is wrong with the selectors under ``key``: an empty ``select`` (selects nothing), a selector matching no code."""
    if values is None:
        return []
    values = tuple(values)
    problems = []
    if key.endswith("select") and key != "extend-select" and not values:
        problems.append(
            f"{key}: an empty list selects no rule; an empty gate is never a pass "
            f'(remove the key for the default ["ALL"])'
        )
    return problems + [f"{key}: {value!r} matches no rule code" for value in values if _unknown_selector(value, codes)]


def _rule_key_problems(key: str, table: Mapping[str, Any], codes: Sequence[str]) -> list[str]:
    """The codes of a ``[rules]`` table (``key``) that no loaded rule has."""
    return [f"{key}.{code}: no rule has the code {code!r}" for code in table if code not in codes]


def _arena_problems(arenas: Mapping[str, Any], codes: Sequence[str], known: Sequence[str]) -> list[str]:
    """Each ``[arenas.NAME]`` table's problems: an arena nothing loaded belongs to, then its selectors and rules."""
    problems = []
    for name, section in arenas.items():
        if name not in known:
            problems.append(
                f"arenas.{name}: no loaded action or plugin belongs to arena {name!r} "
                f"(known: {', '.join(known) or 'none'})"
            )
        problems += _selector_problems(f"arenas.{name}.select", section.select, codes)
        problems += _selector_problems(f"arenas.{name}.ignore", section.ignore, codes)
        problems += _rule_key_problems(f"arenas.{name}.rules", section.rules, codes)
    return problems

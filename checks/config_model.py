"""The configuration's model: what a rules.toml holds once validated, and how one selection layer decides.

Kept apart from reading the file (:mod:`checks.config_parse`, :mod:`checks.config_load`) and from
answering selection questions (:mod:`checks.config_select`): the runner, the judge, the records and
every plugin's facts need these classes, not the TOML reader or cattrs.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NewType

import attrs

from checks.globs import compile_glob
from checks.model import Severity

CONFIG_NAME = "rules.toml"

#: a rules.toml (or pyproject.toml) larger than this is refused before parsing
MAX_CONFIG_BYTES = 1_000_000

#: the files a directory may hold the configuration in; at most one of them (pyproject.toml only with [tool.checks])
CONFIG_FILES = ("rules.toml", ".checks.toml", "pyproject.toml")

PYPROJECT_TABLE = "tool.checks"

DEFAULT_DECISION_LOG = ".checks/decisions.jsonl"

SELECTOR = re.compile(r"^(ALL|[A-Z]{1,4}[0-9]{0,3})$")

#: the keys every ``[arenas.<name>]`` table may hold besides the plugin's own settings
ARENA_KEYS = ("select", "ignore", "rules")

#: sha256 of no bytes: the built-in defaults' digest (a literal: start-up loads no hashlib)
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

#: attribute name -> key in the file, where they differ (ruff's kebab-case names)
KEY_NAMES = {
    "extend_select": "extend-select",
    "extend_ignore": "extend-ignore",
    "per_file_ignores": "per-file-ignores",
    "extend_exclude": "extend-exclude",
}

#: every key the top level of a configuration may hold, as the file spells it (checks/rules.schema.json too)
TOP_KEYS = (
    "select",
    "extend-select",
    "ignore",
    "extend-ignore",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "extend",
    "decision_log",
    "checks_plugins",
    "rules",
    "arenas",
    "waivers",
)

#: what a directory given to a hook never descends into unless ``exclude`` says otherwise (ruff's defaults)
DEFAULT_EXCLUDES = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

#: a list of rule codes or prefixes (``select``/``ignore``); plain ``tuple[str, ...]`` settings stay plain strings
Selectors = NewType("Selectors", tuple)


@attrs.frozen
class RuleSettings:
    """``[rules.<CODE>]``: per-rule overrides."""

    severity: Severity | None = None
    required: bool = False


@attrs.frozen
class Waiver:
    """``[[waivers]]``: lets a failing rule pass for matching targets, with a reason, owner and expiry."""

    rule: str
    target: str
    reason: str
    owner: str
    expires: dt.date

    @property
    def id(self) -> str:
        return f"{self.rule}:{self.target}"

    def expired(self, today: dt.date) -> bool:
        return self.expires < today


@attrs.frozen
class PerFileIgnore:
    """``per-file-ignores``: findings of these rules in files matching ``glob`` are dropped.

    ``glob`` is relative to ``base`` (the configuration's directory, or the working directory
    for ``--per-file-ignores``); a glob without ``/`` also matches a file name anywhere.
    """

    glob: str
    codes: tuple[str, ...]
    base: str = "."

    def matches(self, path: str | None) -> bool:
        if not path:
            return False
        target = Path(path).resolve().as_posix()
        glob = compile_glob(self.glob)
        if "/" not in self.glob and glob.fullmatch(Path(target).name):
            return True
        base = Path(self.base).resolve().as_posix().rstrip("/") + "/"
        return target.startswith(base) and glob.fullmatch(target[len(base) :])


@attrs.frozen
class Layer:
    """One layer of the rule selection, stacked as ruff stacks a configuration and its command line.

    ``select`` (when given) replaces what the layers below selected; ``extend_select`` adds and
    ``ignore`` (``ignore`` and ``extend-ignore`` together) removes on top. Within the layer the
    most specific matching selector decides (``TA301`` over ``TA3`` over ``ALL``), ``ignore``
    on a tie.
    """

    #: where the layer comes from, as ``checks config`` shows it (``rules.toml``, ``command line``)
    name: str
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def decide(self, code: str, group: str | None = None) -> bool | None:
        """True (selected) or False (ignored) when a selector of this layer matches ``code`` (or the rule's
        ``group``: a selector of the group is as specific as one of a code, and yields to it), else None."""
        chosen = _match_len((*(self.select or ()), *self.extend_select), code, group)
        dropped = _match_len(self.ignore, code, group)
        if chosen < 0 and dropped < 0:
            return None
        return chosen > dropped


def _match_len(selectors: Iterable[str], code: str, group: str | None = None) -> int:
    """How specific the most specific selector matching ``code`` or ``group`` is (-1: none matches): the longer
    the prefix the more specific, and a prefix of the code more than one as long of the group."""
    best = -1
    for sel in selectors:
        if sel == "ALL":
            best = max(best, 0)
        elif code.startswith(sel):
            best = max(best, 2 * len(sel) + 1)
        elif group is not None and group.startswith(sel):
            best = max(best, 2 * len(sel))
    return best


@attrs.frozen
class ArenaSection:
    """``[arenas.<name>]``: selection and severity for one arena, plus its plugin's settings."""

    select: Selectors | None = None
    ignore: Selectors = ()
    rules: Mapping[str, RuleSettings] = attrs.field(factory=dict)
    settings: Any = None


@attrs.frozen
class Config:
    """The whole rules.toml, validated."""

    select: Selectors = ("ALL",)
    ignore: Selectors = ()
    decision_log: str = DEFAULT_DECISION_LOG
    #: who set ``decision_log``: "" (the file, or the default), or the option that overrode it ("--decision-log")
    decision_log_from: str = ""
    rules: Mapping[str, RuleSettings] = attrs.field(factory=dict)
    waivers: tuple[Waiver, ...] = ()
    arenas: Mapping[str, ArenaSection] = attrs.field(factory=dict)
    extend_select: Selectors = ()
    extend_ignore: Selectors = ()
    per_file_ignores: tuple[PerFileIgnore, ...] = ()
    #: local plugin modules (file paths or dotted names, relative to the configuration's directory)
    checks_plugins: tuple[str, ...] = ()
    #: where it was read from (None: built-in defaults)
    path: str | None = None
    #: sha256 of the file's bytes, recorded in every decision
    sha256: str = EMPTY_SHA256
    #: the table holding the configuration in its file ("tool.checks" in pyproject.toml), for key paths
    table: str = ""
    #: command-line options that changed the file's selection (``--select=TA1``), recorded and shown
    overrides: tuple[str, ...] = ()
    #: selection layers stacked on the file's: the command line's options, a hook's undecidable rules
    overlays: tuple[Layer, ...] = ()
    #: file and directory globs a directory walk skips (``exclude`` replaces the defaults, ``extend-exclude`` adds)
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    extend_exclude: tuple[str, ...] = ()
    #: the files this one builds on through ``extend``, nearest first
    extends: tuple[str, ...] = ()

    def excluded(self, path: Path) -> bool:
        """Whether a directory walk skips ``path``: a glob of ``exclude``/``extend-exclude`` matches its name,
        or its path relative to the configuration's directory."""
        name = path.name
        try:
            rel = path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            rel = None
        for glob in (*self.exclude, *self.extend_exclude):
            matcher = compile_glob(glob.rstrip("/"))
            if matcher.fullmatch(name) or (rel is not None and matcher.fullmatch(rel)):
                return True
        return False

    def arena(self, name: str | None) -> ArenaSection:
        return self.arenas.get(name or "", ArenaSection())

    def layers(self, arena: str | None) -> list[Layer]:
        """The selection layers for an action of ``arena``: the file's top level, the arena's table, the command line."""
        where = self.path or "<defaults>"
        layers = [Layer(where, self.select, self.extend_select, (*self.ignore, *self.extend_ignore))]
        section = self.arena(arena)
        if section.select is not None or section.ignore:
            layers.append(Layer(f"{where} [arenas.{arena}]", section.select, (), section.ignore))
        return [*layers, *self.overlays]

    def key(self, path: str) -> str:
        """``path`` as the user finds it in the file: ``tool.checks.select`` inside pyproject.toml."""
        return f"{self.table}.{path}" if self.table else path

    @property
    def root(self) -> Path:
        """The directory relative paths in the configuration start from (the file's, else the working one)."""
        return Path(self.path).resolve().parent if self.path and Path(self.path).is_file() else Path.cwd()

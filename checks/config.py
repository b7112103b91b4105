"""The configuration (rules.toml, .checks.toml or [tool.checks]): find it, parse it strictly, answer selection questions.

Parsing goes through a cattrs converter with extra keys forbidden and a strict ``str``
hook, so a misspelt key or a number where a code belongs is an error with its path.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NewType

import attrs

from checks import io, trust
from checks.errors import ConfigError, UsageError
from checks.globs import GlobError, compile_glob
from checks.model import Rule, Severity

CONFIG_NAME = "rules.toml"
#: a rules.toml (or pyproject.toml) larger than this is refused before parsing
MAX_CONFIG_BYTES = 1_000_000
#: the files a directory may hold the configuration in; at most one of them (pyproject.toml only with [tool.checks])
CONFIG_FILES = ("rules.toml", ".checks.toml", "pyproject.toml")
PYPROJECT_TABLE = "tool.checks"
DEFAULT_DECISION_LOG = ".checks/decisions.jsonl"
SELECTOR = re.compile(r"^(ALL|[A-Z]{1,4}[0-9]{0,3})$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: the keys every ``[arenas.<name>]`` table may hold besides the plugin's own settings
ARENA_KEYS = ("select", "ignore", "rules")
#: attribute name -> key in the file, where they differ (ruff's kebab-case names)
#: sha256 of no bytes: the built-in defaults' digest (a literal: start-up loads no hashlib)
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
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


def _structure_str(value: Any, _type: type) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string (got {value!r} that is a {type(value).__name__})")
    return value


def _structure_date(value: Any, _type: type) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and _ISO_DATE.match(value):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError(f"must be a real calendar date YYYY-MM-DD (got {value!r})")


def _structure_selectors(value: Any, _type: type) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list):
        raise TypeError(f"expected a list of rule codes or prefixes (got {value!r})")
    out = []
    for item in value:
        if not isinstance(item, str) or not SELECTOR.match(item):
            raise ValueError(f"expected 'ALL' or a rule code or prefix like 'TA' or 'TA101' (got {item!r})")
        out.append(item)
    return tuple(out)


def _structure_severity(value: Any, _type: type) -> Severity:
    try:
        return Severity(value)
    except ValueError:
        allowed = ", ".join(repr(s.value) for s in Severity)
        raise ValueError(f"expected one of {allowed} (got {value!r})") from None


def _structure_strings(value: Any, _type: type) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise TypeError(f"expected a list of strings (got {value!r})")
    return tuple(_structure_str(item, str) for item in value)


def _structure_bool(value: Any, _type: type) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false (got {value!r})")
    return value


def make_converter():
    """A strict cattrs converter (imported on first use: cattrs is not needed to list rules)."""
    import cattrs

    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_structure_hook(str, _structure_str)
    conv.register_structure_hook(bool, _structure_bool)
    conv.register_structure_hook(Severity, _structure_severity)
    conv.register_structure_hook(dt.date, _structure_date)
    conv.register_structure_hook(Selectors, _structure_selectors)
    conv.register_structure_hook_func(
        lambda t: t == (Selectors | None), lambda v, t: None if v is None else _structure_selectors(v, t)
    )
    conv.register_structure_hook_func(lambda t: t == tuple[str, ...], _structure_strings)
    return conv


_converter = functools.cache(make_converter)


def _flatten(exc: BaseException, path: str) -> list[str]:
    """Turn a cattrs exception tree into ``path: problem`` lines."""
    from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError

    if isinstance(exc, ForbiddenExtraKeysError):
        valid = [KEY_NAMES.get(f.name, f.name) for f in attrs.fields(exc.cl)] if attrs.has(exc.cl) else []
        return [_unknown_key(_at(path, key), key, valid) for key in sorted(exc.extra_fields)]
    if isinstance(exc, (ClassValidationError, IterableValidationError)):
        return [line for sub in exc.exceptions for line in _flatten(sub, _sub_path(sub, path))]
    if isinstance(exc, KeyError):
        return [f"{_at(path, exc.args[0])}: required key is missing"]
    return [f"{path.rstrip(': ')}: {exc}"]


def _sub_path(sub: BaseException, path: str) -> str:
    """The key path of one problem in a cattrs group: ``path`` and the field or index cattrs noted on it."""
    sub_path = path
    for note in getattr(sub, "__notes__", []):
        name = getattr(note, "name", None)
        index = getattr(note, "index", None)
        if name is not None:
            sub_path = _at(path, name)
        elif index is not None:
            sub_path = _at(path, index) if isinstance(index, str) else f"{path.rstrip()}[{index}]"
    return sub_path


def structure(data: Any, cls: type, where: str) -> Any:
    """Structure ``data`` into ``cls`` or raise :class:`ConfigError` listing every problem with its path.

    An empty table is the class's defaults, built without cattrs (whose import and generated
    structuring code cost more than listing the rules): the same object cattrs would build,
    since it passes no key. Should the defaults be invalid (a required key), cattrs reports it.
    """
    if isinstance(data, dict) and not data and attrs.has(cls):
        try:
            return cls()
        except (TypeError, ValueError):
            pass
    from cattrs.errors import BaseValidationError, ForbiddenExtraKeysError

    try:
        return _converter().structure(data, cls)
    except (BaseValidationError, ForbiddenExtraKeysError) as exc:
        raise ConfigError("\n".join(_flatten(exc, where))) from None
    except (TypeError, ValueError, KeyError) as exc:
        raise ConfigError(f"{where.rstrip(': ')}: {exc}") from None


def _mapping(raw: Any, where: str) -> dict:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a table (got {raw!r})")
    return raw


def _at(where: str, key: str) -> str:
    """``where`` extended by ``key``: ``rules.toml: rules`` + ``TA101``, or ``rules.toml: `` + ``select``."""
    return f"{where}{key}" if where.endswith(" ") else f"{where}.{key}"


def _rule_settings(raw: Any, where: str) -> dict[str, RuleSettings]:
    out = {}
    for code, body in _mapping(raw, where).items():
        if not SELECTOR.match(code) or code == "ALL":
            raise ConfigError(f"{_at(where, code)}: not a rule code (expected e.g. 'TA101')")
        out[code] = structure(_mapping(body, _at(where, code)), RuleSettings, _at(where, code))
    return out


def _selectors_at(raw: Any, where: str) -> tuple[str, ...]:
    try:
        return _structure_selectors(raw, Selectors)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _per_file_ignores(raw: Any, where: str, base: str) -> tuple[PerFileIgnore, ...]:
    out = []
    for glob, codes in _mapping(raw, where).items():
        if not glob.strip():
            raise ConfigError(f"{where}: a glob must not be empty")
        _check_glob(glob, f"{where}.{glob!r}")
        out.append(PerFileIgnore(glob, _selectors_at(codes, f"{where}.{glob!r}"), base))
    return tuple(out)


def _check_glob(glob: str, where: str, *, segments: bool = True) -> None:
    """Refuse a glob that cannot be matched (a reversed range, an empty class), naming its key: :class:`ConfigError`."""
    try:
        compile_glob(glob, segments=segments)
    except GlobError as exc:
        raise ConfigError(f"{where}: the glob {glob!r} cannot be matched: {exc} ([[] matches a '[')") from None


def _toml(text: str, source: str) -> dict:
    import tomllib  # noqa: PLC0415 - start-up: read only when a rules.toml exists

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{source}: tables or arrays are nested too deeply to be a rules.toml") from None


def parse(text: str, *, source: str = CONFIG_NAME, sections: Mapping[str, type] | None = None) -> Config:
    """Parse configuration text; ``sections`` maps arena names to their plugins' settings classes.

    A ``source`` named pyproject.toml is read from its ``[tool.checks]`` table. An error about a
    key names the line where the key is set, when the text shows it.
    """
    try:
        return _parse(text, source=source, sections=sections)
    except ConfigError as exc:
        raise ConfigError(_with_line(str(exc), text, source)) from None


def _with_line(message: str, text: str, source: str) -> str:
    """``SOURCE: a.b.key: problem`` as ``SOURCE, line N: a.b.key: problem`` when ``key`` is found in ``text``."""
    head = f"{source}: "
    if not message.startswith(head):
        return message
    path, sep, problem = message[len(head) :].partition(": ")
    line = _line_of(text, path) if sep and path else None
    return f"{source}, line {line}: {path}: {problem}" if line else message


def _line_of(text: str, path: str) -> int | None:
    """The line setting ``path`` (``rules.TA110.severity``, ``waivers[2].expires``, ``select``): the header of
    the table it names, else the key after its table's header (the n-th ``[[waivers]]`` for ``waivers[n]``),
    else the key's first occurrence."""
    own = None if "[" in path else _header_lines(text, path)
    if own:
        return own[0]
    table, _, key = path.rpartition(".")
    key = key.partition("[")[0]
    name, _, index = table.partition("[")
    headers = _header_lines(text, name) if table else []
    pick = int(index.rstrip("]")) if index.rstrip("]").isdigit() else 0
    start = headers[pick] if pick < len(headers) else 0
    return _key_line(text, key, after=start) if key else None


def _header_lines(text: str, table: str) -> list[int]:
    """The lines of ``[table]`` or ``[[table]]`` headers, in order."""
    header = re.compile(rf"^\s*\[+\s*{re.escape(table)}\s*\]+")
    return [n for n, line in enumerate(text.splitlines(), 1) if header.match(line)]


def _parse(text: str, *, source: str, sections: Mapping[str, type] | None) -> Config:
    raw = _toml(text, source) if text.strip() else {}  # tomllib's regular expressions: not for the defaults
    table = ""
    if Path(source).name == "pyproject.toml":
        table = PYPROJECT_TABLE
        tool = raw.get("tool")
        raw = tool.get("checks") if isinstance(tool, dict) else None
        if raw is None:
            raise ConfigError(f"{source}: has no [{PYPROJECT_TABLE}] table")
        raw = _mapping(raw, f"{source}: {PYPROJECT_TABLE}")
    root = f"{source}: {table}" if table else f"{source}: "
    base = str(Path(source).resolve().parent) if Path(source).is_file() else "."
    sections = dict(sections or {})
    top = dict(raw)
    _refuse_unknown(top, TOP_KEYS, root, text)
    top.pop("extend", None)  # followed by load(), which merges what it names under this file
    extend_exclude = _strings_at(top.pop("extend-exclude", []), _at(root, "extend-exclude"))
    rules = _rule_settings(top.pop("rules", {}), _at(root, "rules"))
    arenas_raw = _mapping(top.pop("arenas", {}), _at(root, "arenas"))
    waivers = _waivers(top.pop("waivers", []), root)
    extend_select = _selectors_at(top.pop("extend-select", []), _at(root, "extend-select"))
    extend_ignore = _selectors_at(top.pop("extend-ignore", []), _at(root, "extend-ignore"))
    per_file = _per_file_ignores(top.pop("per-file-ignores", {}), _at(root, "per-file-ignores"), base)
    base_cfg = structure(top, _TopLevel, root)
    for key, globs in (("exclude", base_cfg.exclude), ("extend-exclude", extend_exclude)):
        for i, glob in enumerate(globs):
            _check_glob(glob, f"{_at(root, key)}[{i}]")
    arenas = _arenas(arenas_raw, sections, root)
    return Config(
        select=base_cfg.select,
        ignore=base_cfg.ignore,
        decision_log=base_cfg.decision_log,
        rules=rules,
        waivers=waivers,
        arenas=arenas,
        extend_select=extend_select,
        extend_ignore=extend_ignore,
        per_file_ignores=per_file,
        checks_plugins=base_cfg.checks_plugins,
        exclude=base_cfg.exclude,
        extend_exclude=extend_exclude,
        path=source,
        sha256=_sha256(text),
        table=table,
    )


def _refuse_unknown(table: Mapping[str, Any], known: Sequence[str], root: str, text: str) -> None:
    """An unknown key is refused at its line (:func:`parse` adds it), with the closest valid key and every valid one."""
    for key in table:
        if key not in known:
            raise ConfigError(_unknown_key(_at(root, key), key, known))


def _unknown_key(where: str, key: str, valid: Sequence[str]) -> str:
    """``WHERE: unknown key; did you mean 'x'? (valid keys: ...)``: ``_`` and ``-`` count as one."""
    import difflib

    close = (
        difflib.get_close_matches(key, valid, n=1)
        or difflib.get_close_matches(key.replace("_", "-"), valid, n=1)
        or difflib.get_close_matches(key.replace("-", "_"), valid, n=1)
    )
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{where}: unknown key{hint} (valid keys: {', '.join(valid) or 'none'})"


def _key_line(text: str, key: str, *, after: int = 0) -> int | None:
    """The 1-based line after line ``after`` where ``key`` is first set (``key =``, ``"key" =`` or a
    ``[key]`` table), if found."""
    pattern = re.compile(rf"""^\s*(?:\[+\s*)?(["']?){re.escape(key)}\1\s*(?:=|\.|\])""")
    return next((n for n, line in enumerate(text.splitlines(), 1) if n > after and pattern.match(line)), None)


def _strings_at(raw: Any, where: str) -> tuple[str, ...]:
    try:
        return _structure_strings(raw, tuple)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _sha256(text: str) -> str:
    if not text:
        return EMPTY_SHA256
    import hashlib  # noqa: PLC0415 - only for a rules.toml with text; hashlib loads OpenSSL

    return hashlib.sha256(text.encode()).hexdigest()


def visible(text: str) -> str:
    """``text`` without what a reader cannot see: whitespace, format (zero-width, bidi) and control
    characters, and the blank letters (Hangul fillers, the Braille blank) that render as nothing."""
    blank = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800"}
    return "".join(
        c
        for c in text
        if not c.isspace()
        and c not in blank
        and unicodedata.category(c) not in ("Cf", "Cc", "Co", "Cn", "Zs", "Zl", "Zp")
    )


#: the Unicode categories of letters and digits: what a reason or an owner must show at least one of
LEGIBLE_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No"})


def legible(text: str) -> bool:
    """Whether ``text`` holds a letter or digit a reader sees, judged by its Unicode category.

    Combining marks, variation selectors, format and control characters (Mn, Me, Cf, Cc: U+17B4,
    U+034F, U+FE00, U+E0100, zero-width spaces) are not letters, so text made only of them is refused
    whatever new one appears. The one kind of letter that renders as nothing, the Hangul fillers
    (category Lo, each named ``... FILLER`` by Unicode), is told apart by its name.
    """
    return any(
        unicodedata.category(c) in LEGIBLE_CATEGORIES and not unicodedata.name(c, "").endswith("FILLER") for c in text
    )


def _waivers(raw: object, root: str) -> tuple[Waiver, ...]:
    """``[[waivers]]``: each structured, naming one rule code, with a reason, an owner and a target."""
    if not isinstance(raw, list):
        raise ConfigError(f"{_at(root, 'waivers')}: expected an array of tables ([[waivers]])")
    waivers = []
    for i, item in enumerate(raw):
        where = _at(root, f"waivers[{i}]")
        waiver = structure(_mapping(item, where), Waiver, where)
        if not SELECTOR.match(waiver.rule) or len(waiver.rule) < 5:
            raise ConfigError(f"{where}.rule: must name one rule code like 'TA301' (got {waiver.rule!r})")
        _check_glob(waiver.target, f"{where}.target", segments=False)
        if not visible(waiver.target):
            raise ConfigError(
                f"{where}.target: must not be empty or invisible (only spaces, zero-width or other format "
                "characters); write the method@suite it excuses in plain text"
            )
        for field in ("reason", "owner"):
            if not legible(getattr(waiver, field)):
                raise ConfigError(
                    f"{where}.{field}: must not be empty or invisible (it holds no visible letter or digit, "
                    "only spaces, marks, selectors or format characters); write who and why in plain text"
                )
        waivers.append(waiver)
    return tuple(waivers)


def _arenas(raw: Mapping[str, Any], sections: Mapping[str, type], root: str) -> dict[str, ArenaSection]:
    """``[arenas.NAME]``: selection and rule settings, and the plugin's settings class for the rest.

    An arena a plugin declares settings for but rules.toml leaves out gets those settings'
    defaults; keys for an arena no loaded plugin declares are an error naming them.
    """
    arenas = {}
    for name, body in raw.items():
        where = _at(root, f"arenas.{name}")
        body = dict(_mapping(body, where))
        std = {k: body.pop(k) for k in ARENA_KEYS if k in body}
        arena_rules = _rule_settings(std.pop("rules", {}), f"{where}.rules")
        common = structure(std, _ArenaCommon, where)
        if name in sections:
            settings = structure(body, sections[name], where)
        elif body:
            keys = ", ".join(sorted(body))
            raise ConfigError(
                f"{where}: unknown key(s) {keys}: no loaded plugin defines settings for arena "
                f"'{name}' (known: {', '.join(sorted(sections)) or 'none'})"
            )
        else:
            settings = None
        arenas[name] = ArenaSection(common.select, common.ignore, arena_rules, settings)
    for name, cls in sections.items():
        if name not in arenas:
            arenas[name] = ArenaSection(settings=structure({}, cls, _at(root, f"arenas.{name}")))
    return arenas


@attrs.frozen
class _TopLevel:
    select: Selectors = ("ALL",)
    ignore: Selectors = ()
    decision_log: str = DEFAULT_DECISION_LOG
    checks_plugins: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES


@attrs.frozen
class _ArenaCommon:
    select: Selectors | None = None
    ignore: Selectors = ()


def _holds_config(path: Path) -> bool:
    """pyproject.toml counts only with a [tool.checks] table (a broken one counts, so its error is shown)."""
    if path.name != "pyproject.toml":
        return True
    import tomllib  # noqa: PLC0415 - start-up: read only when a rules.toml exists

    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    try:
        tool = tomllib.loads(text).get("tool")
    except (tomllib.TOMLDecodeError, RecursionError):
        return "[tool.checks" in text
    return isinstance(tool, dict) and "checks" in tool


def _held(folder: Path) -> Path | None:
    """The one configuration file ``folder`` itself holds, if any (two side by side are an error)."""
    found = [folder / name for name in CONFIG_FILES if (folder / name).is_file() and _holds_config(folder / name)]
    if len(found) > 1:
        names = " and ".join(p.name for p in found)
        raise ConfigError(
            f"{folder}: {names} both hold a checks configuration; keep exactly one per directory "
            f"(move the settings into one file and delete the other)"
        )
    return found[0] if found else None


def find(start: Path, seen: dict[Path, Path | None] | None = None) -> Path | None:
    """The configuration nearest to ``start``: the first directory upwards holding one, as ruff finds ruff.toml.

    A directory holds at most one: rules.toml, .checks.toml and a pyproject.toml with
    [tool.checks] side by side are an error, since which one wins would be a guess.
    ``seen`` (one command's memo, directory -> its nearest configuration) spares walking again the directories an
    earlier file of the same run already walked: the walk stops at the first one known.
    """
    start = start.resolve()
    seen = {} if seen is None else seen
    walked: list[Path] = []
    result = None
    for folder in (start, *start.parents):
        if folder in seen:
            result = seen[folder]
            break
        walked.append(folder)
        result = _held(folder)
        if result is not None:
            break
    for folder in walked:
        seen[folder] = result
    return result


def load(path: Path | None, *, cwd: Path, sections: Mapping[str, type] | None = None) -> Config:
    """Load ``path`` (from ``--config``), else the nearest configuration file, else the built-in defaults."""
    if path is None:
        path = find(cwd)
        if path is None:
            return parse("", source="<defaults>", sections=sections)
    return _load_file(path, sections, chain=())


#: how many ``extend`` steps a chain may take (a longer one is surely a mistake)
MAX_EXTENDS = 10


def _load_file(path: Path, sections: Mapping[str, type] | None, chain: tuple[Path, ...]) -> Config:
    """``path`` parsed, on top of what its ``extend`` names (relative to it), followed to the end of the chain."""
    trust.check(path, "configuration")
    try:
        text = io.read_text(path, limit=MAX_CONFIG_BYTES, what="a rules.toml")
    except io.ReadError as exc:
        where = f"{chain[-1]}: extend: " if chain else ""
        raise ConfigError(f"{where}{exc}") from None
    own = parse(text, source=str(path), sections=sections)
    target = _extend_target(text, path)
    if target is None:
        return own
    if target.resolve() in {p.resolve() for p in (*chain, path)} or len(chain) >= MAX_EXTENDS:
        names = " -> ".join(str(p) for p in (*chain, path, target))
        raise ConfigError(
            f"{path}: extend: {names} is a cycle or longer than {MAX_EXTENDS} files; "
            f"make one file the base of the others"
        )
    return extended(_load_file(target, sections, (*chain, path)), own, _table(text, path))


def _extend_target(text: str, path: Path) -> Path | None:
    """The file ``extend`` names, relative to ``path``'s directory; None without the key."""
    value = _table(text, path).get("extend")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"{path}: extend: expected the path of another configuration file, e.g. "
            f'extend = "../rules.toml" (got {value!r})'
        )
    return (path.parent / os.path.expanduser(value)).resolve()


def _table(text: str, path: Path) -> dict:
    """The configuration's table as written (already validated by :func:`parse`)."""
    raw = _toml(text, str(path))
    if path.name == "pyproject.toml":
        raw = (raw.get("tool") or {}).get("checks") or {}
    return raw


#: Config attribute per top-level key
_FIELD = {key: key.replace("-", "_") for key in TOP_KEYS}


def _merged(name: str, base: Config, own: Config, written: Any) -> Any:
    """One field of :func:`extended`: the file's value, or for tables of entries both merged."""
    if name in ("rules", "arenas"):  # only the entries the file writes (parse fills in the arenas' defaults)
        return {**getattr(base, name), **{k: v for k, v in getattr(own, name).items() if k in written}}
    if name == "per_file_ignores":
        globs = {p.glob for p in own.per_file_ignores}
        return (*(p for p in base.per_file_ignores if p.glob not in globs), *own.per_file_ignores)
    if name == "waivers":
        return (*base.waivers, *own.waivers)
    return getattr(own, name)


def extended(base: Config, own: Config, written: Mapping[str, Any]) -> Config:
    """``own`` (the file in use) over ``base`` (the file its ``extend`` names), as ruff merges ``extend``:
    a key the file sets replaces the base's, except tables of entries, which merge entry by entry
    (``rules`` and ``arenas`` by name, ``per-file-ignores`` by glob) and ``waivers``, which add up.
    ``checks_plugins`` is never inherited: only the configuration in use names code to run."""
    changes = {
        _FIELD[key]: _merged(_FIELD[key], base, own, written[key])
        for key in set(written) - {"extend", "checks_plugins"}
    }
    digest = _sha256(f"{own.sha256}\n{base.sha256}")  # a change to either file changes what records carry
    return attrs.evolve(
        base,
        **changes,
        checks_plugins=own.checks_plugins,
        path=own.path,
        table=own.table,
        sha256=digest,
        extends=(base.path or "", *base.extends),
    )


def local_plugins(path: Path) -> list[tuple[str, str]]:
    """``(entry, directory)`` for each ``checks_plugins`` entry of the file, read before any plugin loads.

    Only this key is read here; everything else (and any error) is reported when the whole
    file is parsed with the loaded plugins' settings.
    """
    import tomllib  # noqa: PLC0415 - start-up: read only when a rules.toml exists

    trust.check(path, "configuration")
    try:
        raw = tomllib.loads(io.read_text(path, limit=MAX_CONFIG_BYTES, what="a rules.toml"))
    except (io.ReadError, tomllib.TOMLDecodeError, RecursionError):
        return []
    if path.name == "pyproject.toml":
        tool = raw.get("tool")
        raw = tool.get("checks") if isinstance(tool, dict) else None
    entries = raw.get("checks_plugins") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        return []
    base = str(path.resolve().parent)
    return [(entry, base) for entry in entries]


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
            "\n".join(_with_line(f"{where}: {config.key(p)}", text, where) for p in problems) + f"\n({hint})"
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

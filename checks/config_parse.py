"""Configuration text to a :class:`~checks.config_model.Config`, strictly: every key known, every value typed.

Parsing goes through a cattrs converter with extra keys forbidden and a strict ``str``
hook, so a misspelt key or a number where a code belongs is an error with its path, and the
line that sets it when the text shows it.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from checks import suggest
from checks.config_model import (
    ARENA_KEYS,
    CONFIG_NAME,
    DEFAULT_DECISION_LOG,
    DEFAULT_EXCLUDES,
    EMPTY_SHA256,
    KEY_NAMES,
    PYPROJECT_TABLE,
    SELECTOR,
    TOP_KEYS,
    ArenaSection,
    Config,
    PerFileIgnore,
    RuleSettings,
    Selectors,
    Waiver,
)
from checks.errors import ConfigError
from checks.globs import GlobError, compile_glob
from checks.model import Severity

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


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

    A table the framework's own classes describe is built by :func:`_plain` with the converter's
    own hooks, without cattrs (whose import and generated structuring code cost a pre-commit hook
    more than the rest of its start); cattrs structures anything else (a plugin's settings class)
    and explains whatever :func:`_plain` would not build, so every message is the converter's.
    """
    built = _plain(data, cls)
    if built is not None:
        return built
    from cattrs.errors import BaseValidationError, ForbiddenExtraKeysError

    try:
        return _converter().structure(data, cls)
    except (BaseValidationError, ForbiddenExtraKeysError) as exc:
        raise ConfigError("\n".join(_flatten(exc, where))) from None
    except (TypeError, ValueError, KeyError) as exc:
        raise ConfigError(f"{where.rstrip(': ')}: {exc}") from None


def _optional(hook: Callable[[Any, type], Any]) -> Callable[[Any, type], Any]:
    return lambda value, _type: None if value is None else hook(value, _type)


#: field type -> the converter's hook for it (make_converter registers the same functions)
_HOOKS: dict[Any, Callable[[Any, type], Any]] = {
    str: _structure_str,
    bool: _structure_bool,
    Severity: _structure_severity,
    Severity | None: _optional(_structure_severity),
    dt.date: _structure_date,
    Selectors: _structure_selectors,
    Selectors | None: _optional(_structure_selectors),
    tuple[str, ...]: _structure_strings,
}


def _plain(data: Any, cls: type) -> Any:
    """``cls`` built from the table ``data`` with the converter's hooks, or None for cattrs to build or refuse.

    None whenever cattrs could answer otherwise: a key ``cls`` lacks, a value a hook refuses, a
    field of a type only cattrs knows, a required field left out. What it builds is what cattrs
    builds, the same hooks applied to the same values.
    """
    if not isinstance(data, dict) or not attrs.has(cls):
        return None
    fields = {field.name: field for field in attrs.fields(attrs.resolve_types(cls))}
    values = {}
    for key, value in data.items():
        hook = _HOOKS.get(fields[key].type) if key in fields else None
        if hook is None:
            return None
        try:
            values[key] = hook(value, fields[key].type)
        except (TypeError, ValueError):
            return None
    try:
        return cls(**values)
    except (TypeError, ValueError):
        return None


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


def toml_table(text: str, source: str) -> dict:
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
        raise ConfigError(with_line(str(exc), text, source)) from None


def with_line(message: str, text: str, source: str) -> str:
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
    raw = toml_table(text, source) if text.strip() else {}  # tomllib's regular expressions: not for the defaults
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
        sha256=text_sha256(text),
        table=table,
    )


def _refuse_unknown(table: Mapping[str, Any], known: Sequence[str], root: str, text: str) -> None:
    """An unknown key is refused at its line (:func:`parse` adds it), with the closest valid key and every valid one."""
    for key in table:
        if key not in known:
            raise ConfigError(_unknown_key(_at(root, key), key, known))


def _unknown_key(where: str, key: str, valid: Sequence[str]) -> str:
    """``WHERE: unknown key; did you mean 'x'? (valid keys: ...)``: ``_`` and ``-`` count as one."""
    close = (
        suggest.closest(key, valid)
        or suggest.closest(key.replace("_", "-"), valid)
        or suggest.closest(key.replace("-", "_"), valid)
    )
    hint = suggest.hint(close)
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


def text_sha256(text: str) -> str:
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

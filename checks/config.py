"""rules.toml: find it, parse it strictly into frozen attrs records, and answer selection questions.

Parsing goes through a cattrs converter with extra keys forbidden and a strict ``str``
hook, so a misspelt key or a number where a code belongs is an error with its path.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NewType

import functools

import attrs

from checks.errors import ConfigError
from checks.model import Severity

CONFIG_NAME = "rules.toml"
DEFAULT_DECISION_LOG = ".checks/decisions.jsonl"
SELECTOR = re.compile(r"^(ALL|[A-Z]{1,4}[0-9]{0,3})$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: the keys every ``[arenas.<name>]`` table may hold besides the plugin's own settings
ARENA_KEYS = ("select", "ignore", "rules")


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
    rules: Mapping[str, RuleSettings] = attrs.field(factory=dict)
    waivers: tuple[Waiver, ...] = ()
    arenas: Mapping[str, ArenaSection] = attrs.field(factory=dict)
    #: where it was read from (None: built-in defaults)
    path: str | None = None
    #: sha256 of the file's bytes, recorded in every decision
    sha256: str = hashlib.sha256(b"").hexdigest()

    def arena(self, name: str | None) -> ArenaSection:
        return self.arenas.get(name or "", ArenaSection())


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
            raise ValueError(
                f"expected 'ALL' or a rule code or prefix like 'TA' or 'TA101' (got {item!r})"
            )
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
        return [f"{path}.{key}: unknown key" for key in sorted(exc.extra_fields)]
    if isinstance(exc, (ClassValidationError, IterableValidationError)):
        lines = []
        for sub in exc.exceptions:
            sub_path = path
            for note in getattr(sub, "__notes__", []):
                name = getattr(note, "name", None)
                index = getattr(note, "index", None)
                if name is not None:
                    sub_path = f"{path}.{name}"
                elif index is not None:
                    sub_path = f"{path}.{index}" if isinstance(index, str) else f"{path}[{index}]"
            lines += _flatten(sub, sub_path)
        return lines
    if isinstance(exc, KeyError):
        return [f"{path}.{exc.args[0]}: required key is missing"]
    return [f"{path}: {exc}"]


def structure(data: Any, cls: type, where: str) -> Any:
    """Structure ``data`` into ``cls`` or raise :class:`ConfigError` listing every problem with its path."""
    from cattrs.errors import BaseValidationError, ForbiddenExtraKeysError

    try:
        return _converter().structure(data, cls)
    except (BaseValidationError, ForbiddenExtraKeysError) as exc:
        raise ConfigError("\n".join(_flatten(exc, where))) from None
    except (TypeError, ValueError, KeyError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _mapping(raw: Any, where: str) -> dict:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a table (got {raw!r})")
    return raw


def _rule_settings(raw: Any, where: str) -> dict[str, RuleSettings]:
    out = {}
    for code, body in _mapping(raw, where).items():
        if not SELECTOR.match(code) or code == "ALL":
            raise ConfigError(f"{where}.{code}: not a rule code (expected e.g. 'TA101')")
        out[code] = structure(_mapping(body, f"{where}.{code}"), RuleSettings, f"{where}.{code}")
    return out


def parse(text: str, *, source: str = CONFIG_NAME, sections: Mapping[str, type] | None = None) -> Config:
    """Parse rules.toml text; ``sections`` maps arena names to their plugins' settings classes."""
    import tomllib  # its regular expressions cost a few ms: not for the defaults

    try:
        raw = tomllib.loads(text) if text.strip() else {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{source}: tables or arrays are nested too deeply to be a rules.toml") from None
    sections = dict(sections or {})
    top = dict(raw)
    rules = _rule_settings(top.pop("rules", {}), f"{source}: rules")
    arenas_raw = _mapping(top.pop("arenas", {}), f"{source}: arenas")
    waivers_raw = top.pop("waivers", [])
    if not isinstance(waivers_raw, list):
        raise ConfigError(f"{source}: waivers: expected an array of tables ([[waivers]])")
    waivers = tuple(
        structure(_mapping(w, f"{source}: waivers[{i}]"), Waiver, f"{source}: waivers[{i}]")
        for i, w in enumerate(waivers_raw)
    )
    base = structure(top, _TopLevel, f"{source}:")
    arenas = {}
    for name, body in arenas_raw.items():
        where = f"{source}: arenas.{name}"
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
            arenas[name] = ArenaSection(settings=structure({}, cls, f"{source}: arenas.{name}"))
    for i, waiver in enumerate(waivers):
        if not SELECTOR.match(waiver.rule) or len(waiver.rule) < 5:
            raise ConfigError(f"{source}: waivers[{i}].rule: must name one rule code like 'TA301' (got {waiver.rule!r})")
        for field in ("reason", "owner", "target"):
            if not getattr(waiver, field).strip():
                raise ConfigError(f"{source}: waivers[{i}].{field}: must not be empty")
    return Config(
        select=base.select,
        ignore=base.ignore,
        decision_log=base.decision_log,
        rules=rules,
        waivers=waivers,
        arenas=arenas,
        path=source,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
    )


@attrs.frozen
class _TopLevel:
    select: Selectors = ("ALL",)
    ignore: Selectors = ()
    decision_log: str = DEFAULT_DECISION_LOG


@attrs.frozen
class _ArenaCommon:
    select: Selectors | None = None
    ignore: Selectors = ()


def find(start: Path) -> Path | None:
    """The nearest rules.toml in ``start`` or a parent directory, as ruff finds ruff.toml."""
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def load(path: Path | None, *, cwd: Path, sections: Mapping[str, type] | None = None) -> Config:
    """Load ``path`` (from ``--config``), else the nearest rules.toml, else the built-in defaults."""
    if path is None:
        path = find(cwd)
        if path is None:
            return parse("", source="<defaults>", sections=sections)
    from checks import io

    try:
        text = io.read_text(path, limit=1_000_000, what="a rules.toml")
    except io.ReadError as exc:
        raise ConfigError(str(exc)) from None
    return parse(text, source=str(path), sections=sections)


def _unknown_selector(selector: str, codes: Iterable[str]) -> bool:
    return selector != "ALL" and not any(code.startswith(selector) for code in codes)


def check_codes(config: Config, codes: Iterable[str], arenas: Iterable[str], blocked: Iterable[str] = ()) -> None:
    """Refuse a configuration that names a rule or arena nothing loaded defines, or selects nothing.

    A typo in ``select`` would otherwise drop every optional gate without a word, and a typo
    in ``ignore``, ``[rules.X]`` or a waiver would keep a rule the user meant to change.
    Every problem is listed with its key path; raises :class:`ConfigError`.
    """
    codes, known_arenas, blocked = sorted(codes), sorted(set(arenas)), sorted(blocked)
    where = config.path or CONFIG_NAME
    problems = []

    def selectors(key: str, values: Iterable[str] | None) -> None:
        if values is None:
            return
        values = tuple(values)
        if key.endswith("select") and not values:
            problems.append(f"{key}: an empty list selects no rule; an empty gate is never a pass "
                            f"(remove the key for the default [\"ALL\"])")
        for value in values:
            if _unknown_selector(value, codes):
                problems.append(f"{key}: {value!r} matches no rule code")

    def rule_keys(key: str, table: Mapping[str, Any]) -> None:
        for code in table:
            if code not in codes:
                problems.append(f"{key}.{code}: no rule has the code {code!r}")

    selectors("select", config.select)
    selectors("ignore", config.ignore)
    rule_keys("rules", config.rules)
    for name, section in config.arenas.items():
        if name not in known_arenas:
            problems.append(f"arenas.{name}: no loaded action or plugin belongs to arena {name!r} "
                            f"(known: {', '.join(known_arenas) or 'none'})")
        selectors(f"arenas.{name}.select", section.select)
        selectors(f"arenas.{name}.ignore", section.ignore)
        rule_keys(f"arenas.{name}.rules", section.rules)
    for i, waiver in enumerate(config.waivers):
        if waiver.rule not in codes:
            problems.append(f"waivers[{i}].rule: no rule has the code {waiver.rule!r}")
    if problems:
        hint = "`checks rules` lists the loaded rules"
        if blocked:
            hint += f"; blocked with -p no:NAME: {', '.join(blocked)}"
        raise ConfigError("\n".join(f"{where}: {p}" for p in problems) + f"\n({hint})")


def _match_len(selectors: Iterable[str], code: str) -> int:
    best = -1
    for sel in selectors:
        if sel == "ALL":
            best = max(best, 0)
        elif code.startswith(sel):
            best = max(best, len(sel))
    return best


def is_selected(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    """Ruff's rule: the most specific matching selector wins; on a tie, ``ignore`` wins."""
    chosen = _match_len(select, code)
    return chosen >= 0 and chosen > _match_len(ignore, code)

"""Validation-protocol keys: the short strings that say how a method's results were validated.

A key is what TabArena records per result and what ``info.py`` declares, e.g. ``8x1``
(8 bag folds, 1 bag set), ``8x1+tiny5x5<=500+task-specific+adapt-classes`` (BeyondArena),
``holdout:8x1``, ``outer``, ``system``, ``custom`` or ``custom:3x1``. Keys are compared as
text, so only the canonical spelling TabArena writes is accepted: parts in a fixed order,
no leading zeros, no spaces.
"""

from __future__ import annotations

import re

import attrs

from checks import InputError

#: the named official protocols, for ``--expect-validation-protocol NAME``
OFFICIAL = {
    "tabarena": "8x1",
    "beyondarena": "8x1+tiny5x5<=500+task-specific+adapt-classes",
}
#: flavours whose results may be submitted as official
OFFICIAL_FLAVOURS = ("bagged", "system")
#: flavours written as a bare word, without a protocol
_BARE_ONLY = ("system",)
#: the bare words a key may be (a flavour with a protocol may be any kebab-case name)
BARE_FLAVOURS = ("custom", "outer", "predictor", "system")
_MAX_LEN = 200
_NUMBER = r"[1-9][0-9]*"
_PROTOCOL = re.compile(
    rf"^(?P<folds>{_NUMBER})x(?P<sets>{_NUMBER})"
    rf"(?:\+tiny(?P<tf>{_NUMBER})x(?P<ts>{_NUMBER})<=(?P<tn>{_NUMBER}))?"
    r"(?P<task>\+task-specific)?"
    r"(?P<adapt>\+adapt-classes)?$"
)
_FLAVOUR = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_FORMAT_HELP = (
    "expected '<folds>x<sets>' optionally followed, in this order, by '+tiny<f>x<s><=<n>', "
    "'+task-specific' and '+adapt-classes' (e.g. '8x1'), optionally prefixed by a flavour "
    "('holdout:8x1', 'custom:3x1'), or a bare flavour ('system', 'custom', 'outer')"
)


@attrs.frozen
class ProtocolKey:
    """A parsed key. ``flavour`` is ``bagged`` for a bare protocol like ``8x1``."""

    flavour: str
    folds: int | None = None
    sets: int | None = None
    #: (folds, sets, max rows) of the small-task regime, or None
    tiny: tuple[int, int, int] | None = None
    task_specific: bool = False
    adapt_classes: bool = False

    @property
    def protocol(self) -> str | None:
        """The protocol part (``8x1+...``) or None for a bare flavour."""
        if self.folds is None:
            return None
        text = f"{self.folds}x{self.sets}"
        if self.tiny:
            text += "+tiny{}x{}<={}".format(*self.tiny)
        if self.task_specific:
            text += "+task-specific"
        if self.adapt_classes:
            text += "+adapt-classes"
        return text

    @property
    def text(self) -> str:
        """The canonical key, as TabArena writes it."""
        if self.flavour == "bagged":
            return self.protocol or "custom"
        return f"{self.flavour}:{self.protocol}" if self.protocol else self.flavour

    def __str__(self) -> str:
        return self.text


def _bad(text: str, problem: str) -> InputError:
    return InputError(f"validation protocol {text!r}: {problem}; {_FORMAT_HELP}")


def _parse_protocol(text: str, whole: str) -> dict:
    match = _PROTOCOL.match(text)
    if not match:
        raise _bad(whole, f"{text!r} is not a protocol")
    folds, sets = int(match["folds"]), int(match["sets"])
    if folds < 2:
        raise _bad(whole, f"bagging needs at least 2 folds (got {folds})")
    tiny = None
    if match["tf"]:
        tiny = (int(match["tf"]), int(match["ts"]), int(match["tn"]))
        if tiny[0] < 2:
            raise _bad(whole, f"the tiny regime needs at least 2 folds (got {tiny[0]})")
    return dict(
        folds=folds, sets=sets, tiny=tiny, task_specific=bool(match["task"]), adapt_classes=bool(match["adapt"])
    )


def parse_key(text: object) -> ProtocolKey:
    """Parse a key; anything that is not the canonical spelling raises :class:`InputError`."""
    if not isinstance(text, str):
        raise InputError(f"validation protocol must be a string like '8x1' (got {text!r})")
    if not text or len(text) > _MAX_LEN or text != text.strip():
        raise _bad(text[:_MAX_LEN], "empty, too long or padded with spaces")
    flavour, sep, rest = text.partition(":")
    return _parse_flavoured(text, flavour, rest) if sep else _parse_unflavoured(text)


def _parse_unflavoured(text: str) -> ProtocolKey:
    """A key without ``flavour:``: a bagged protocol (it starts with its fold count) or a bare flavour."""
    if text[0].isdigit():
        return ProtocolKey("bagged", **_parse_protocol(text, text))
    if text not in BARE_FLAVOURS:
        raise _bad(text, f"not a protocol, nor one of the bare flavours {', '.join(BARE_FLAVOURS)}")
    return ProtocolKey(text)


def _parse_flavoured(text: str, flavour: str, rest: str) -> ProtocolKey:
    """A ``flavour:protocol`` key; the bagged flavour and the bare-only ones are refused with the spelling to use."""
    if not _FLAVOUR.match(flavour):
        raise _bad(text, f"{flavour!r} is not a flavour name")
    if flavour == "bagged":
        raise _bad(text, f"a bagged key is written without a flavour (write {rest!r})")
    if flavour in _BARE_ONLY:
        raise _bad(text, f"{flavour!r} takes no protocol (write {flavour!r})")
    return ProtocolKey(flavour, **_parse_protocol(rest, text))


def _key(key: ProtocolKey | str) -> ProtocolKey:
    return key if isinstance(key, ProtocolKey) else parse_key(key)


def is_official(key: ProtocolKey | str) -> bool:
    """Only bagged and system flavours can be submitted as official results."""
    return _key(key).flavour in OFFICIAL_FLAVOURS


def resolve_expected(value: str) -> str:
    """The key ``--expect-validation-protocol tabarena|beyondarena|KEY`` asks for."""
    named = OFFICIAL.get(value.strip().lower()) if isinstance(value, str) else None
    if named:
        return named
    try:
        return parse_key(value).text
    except InputError as exc:
        raise InputError(f"--expect-validation-protocol: {exc} (or a name: {', '.join(OFFICIAL)})") from None

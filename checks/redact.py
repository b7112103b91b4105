"""Keep credentials out of everything arena-checks prints or writes.

Redaction runs on the values themselves, before any escaping (:func:`redact_data` for a record
about to become JSON): a secret holding a quote, a backslash or a non-ASCII character is stored
escaped (``\\"``, ``\\\\``, ``\\u00e9``) and the escaped form no longer contains it. Text that
was escaped already is still cleaned: :func:`redact` also removes the JSON, XML and repr
spellings of every secret.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

#: environment variable names whose values are treated as secrets
SECRET_NAME = re.compile(r"(SECRET|TOKEN|PASSWORD|PASSWD|ACCESS_KEY|API_KEY|CREDENTIAL|PRIVATE_KEY|ACCOUNT_ID)", re.I)
#: well-known credential shapes, redacted wherever they appear
SECRET_SHAPES = re.compile(
    r"(hf_[A-Za-z0-9]{16,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,})"
)
#: command-line option names that look like a credential is being passed
CREDENTIAL_OPTION = re.compile(
    r"^--?[\w-]*(secret|token|password|passwd|access-key|api-key|credential)[\w-]*(=.*)?$", re.I
)
MASK = "***"


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of secret-looking environment variables, longest first (so overlaps redact fully)."""
    env = os.environ if environ is None else environ
    values = {v for k, v in env.items() if SECRET_NAME.search(k) and v and len(v) >= 6}
    return sorted(values, key=len, reverse=True)


def _spellings(value: str) -> set[str]:
    """``value`` and the forms escaping gives it in JSON, XML/HTML and Python reprs."""
    import html  # noqa: PLC0415 - only when a secret is set; html stays out of every other command's start-up

    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        html.escape(value),
        html.escape(value, quote=False),
        repr(value)[1:-1],
        value.encode("unicode_escape").decode("ascii"),
    }
    return {f for f in forms if f}


class _Forms(list):
    """Every spelling of every secret, longest first (so overlaps are masked whole), and ``spaced``: one
    pattern matching any secret with whitespace between its characters (text re-spaced by a formatter:
    ``ast.unparse`` writes a credential that parses as Python, ``a/b``, as ``a / b``)."""

    spaced: re.Pattern | None = None


def _forms(environ: Mapping[str, str] | None) -> _Forms:
    values = secret_values(environ)
    forms = _Forms(sorted({f for value in values for f in _spellings(value)}, key=len, reverse=True))
    spaced = [r"\s*".join(map(re.escape, "".join(v.split()))) for v in values if len("".join(v.split())) >= 6]
    forms.spaced = re.compile("|".join(spaced)) if spaced else None
    return forms


def _mask(text: str, forms: _Forms) -> str:
    for form in forms:
        text = text.replace(form, MASK)
    if forms.spaced is not None:
        text = forms.spaced.sub(MASK, text)
    return SECRET_SHAPES.sub(MASK, text)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret value (and its escaped spellings) and credential shape masked."""
    return _mask(text, _forms(environ))


def redact_data(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every string masked like :func:`redact`, keys included."""
    forms = _forms(environ)

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            return _mask(item, forms)
        if isinstance(item, dict):
            return {clean(k): clean(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [clean(v) for v in item]
        return item

    return clean(value)


def credential_options(argv: Iterable[str]) -> list[str]:
    """The options in ``argv`` that would pass a credential on the command line."""
    return [a.split("=", 1)[0] for a in argv if a.startswith("-") and CREDENTIAL_OPTION.match(a)]

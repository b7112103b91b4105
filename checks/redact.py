"""Keep credentials out of everything arena-checks prints or writes."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

#: environment variable names whose values are treated as secrets
SECRET_NAME = re.compile(r"(SECRET|TOKEN|PASSWORD|PASSWD|ACCESS_KEY|API_KEY|CREDENTIAL|PRIVATE_KEY)", re.I)
#: well-known credential shapes, redacted wherever they appear
SECRET_SHAPES = re.compile(
    r"(hf_[A-Za-z0-9]{16,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,})"
)
#: command-line option names that look like a credential is being passed
CREDENTIAL_OPTION = re.compile(r"^--?[\w-]*(secret|token|password|passwd|access-key|api-key|credential)[\w-]*(=.*)?$", re.I)
MASK = "***"


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of secret-looking environment variables, longest first (so overlaps redact fully)."""
    env = os.environ if environ is None else environ
    values = {v for k, v in env.items() if SECRET_NAME.search(k) and v and len(v) >= 6}
    return sorted(values, key=len, reverse=True)


def redact(text: str, environ: Mapping[str, str] | None = None) -> str:
    for value in secret_values(environ):
        text = text.replace(value, MASK)
    return SECRET_SHAPES.sub(MASK, text)


def credential_options(argv: Iterable[str]) -> list[str]:
    """The options in ``argv`` that would pass a credential on the command line."""
    return [a.split("=", 1)[0] for a in argv if a.startswith("-") and CREDENTIAL_OPTION.match(a)]

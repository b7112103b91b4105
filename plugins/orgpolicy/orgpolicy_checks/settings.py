"""``[arenas.orgpolicy]`` in rules.toml: the organisation's knobs."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

ARENA = "orgpolicy"


def _regex(instance, attribute, value) -> None:
    try:
        re.compile(value)
    except (re.error, TypeError) as exc:
        raise ValueError(f"{attribute.name} must be a regular expression (got {value!r}: {exc})") from None


@attrs.frozen
class OrgPolicySettings:
    """Every key is optional.

    ``relax`` lists rule codes or prefixes the organisation does not enforce (added to
    ``ignore`` for every run; required rules stay required whatever it says).
    """

    audit_log: str = ".checks/orgpolicy-audit.log"
    friday_freeze: bool = True
    llm_pattern: str = "*LLM*"
    ticket_pattern: str = attrs.field(default=r"([A-Z][A-Z0-9]+-[0-9]+|#[0-9]+|https?://\S+)", validator=_regex)
    relax: list[str] = attrs.field(factory=list)

    def audit_path(self, cwd: str | Path = ".") -> Path:
        path = Path(self.audit_log)
        return path if path.is_absolute() else Path(cwd) / path


def of(config) -> OrgPolicySettings:
    """The settings from a loaded configuration, or the defaults when rules.toml has none."""
    found = config.arena(ARENA).settings
    return found if isinstance(found, OrgPolicySettings) else OrgPolicySettings()

"""``[arenas.beyondarena]`` in rules.toml: what makes a method BeyondArena's and what it must meet."""

from __future__ import annotations

import fnmatch

import attrs

ARENA = "beyondarena"
OFFICIAL_PROTOCOL = "8x1+tiny5x5<=500+task-specific+adapt-classes"


@attrs.frozen
class BeyondArenaSettings:
    """BeyondArena's settings; every key is optional.

    ``suite_pattern`` decides which methods are BeyondArena's (their suite matches it);
    ``suites`` lists the suites BeyondArena actually runs, so a near miss is caught.
    """

    official_protocol: str = OFFICIAL_PROTOCOL
    suite_pattern: str = "beyond_*"
    suites: list[str] = attrs.field(factory=lambda: ["beyond_iid_benchmark_2026"])
    collection: str = "contexts/beyondarena/methods.py"

    def claims(self, suite: object) -> bool:
        """Whether a method with this suite belongs to BeyondArena."""
        return isinstance(suite, str) and fnmatch.fnmatchcase(suite, self.suite_pattern)


def of(ctx) -> BeyondArenaSettings:
    """BeyondArena's settings in any run: the run's own when its action belongs to BeyondArena, else
    rules.toml's ``[arenas.beyondarena]`` (rules bound to other arenas' actions read them from there)."""
    if isinstance(ctx.settings, BeyondArenaSettings):
        return ctx.settings
    found = ctx.config.arena(ARENA).settings
    return found if isinstance(found, BeyondArenaSettings) else BeyondArenaSettings()

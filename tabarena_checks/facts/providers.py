"""The facts TabArena's rules declare with ``@checks.needs`` (pytest's fixtures, for rules), and their options.

A rule family asks for a fact here instead of reading ``ctx.facts`` or ``ctx.options`` itself, so what
a missing or unreadable fact means is decided once: None, and the rule that owns the input (TA116 for
the declaration, TA302 for the raw data) reports why. The options a rule judges by (``--engine``,
``--expect-validation-protocol``, ...) are providers too: this module is the one place a rule's view of
the command line is read, with the default an action without that option means. Light: rules import it
at their top, and ``checks rules`` imports every rule module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checks import Finding, fact
from checks import at as at_place
from tabarena_checks.metadata.origins import CALL, site

if TYPE_CHECKING:  # the model loads when a rule runs, not when `checks rules` lists them
    from tabarena_checks.metadata.model import MethodMetadata

#: the declared MethodMetadata; None when none was given or the reference is bad (TA116 reports that)
declared_metadata = fact("metadata")
#: what the raw results say; None when the facts hold no raw data or it could not be read (TA302, required,
#: reports why, so skipping never hides a failure)
raw_inference = fact("inference")
#: the raw index the rules judge; None when the facts hold no raw data or it could not be read (TA302 says why)
raw_index = fact("index")


def single_method_inference(ctx) -> Any | None:
    """The inference when the raw data holds exactly one method (TA302 fails otherwise)."""
    inference = raw_inference(ctx)
    if inference is None or len(inference.methods) != 1:
        return None
    return inference


def _option(ctx, name: str, default: Any = None) -> Any:
    """The action's option ``name``; ``default`` for an action without it (its rules then judge as without it)."""
    return getattr(ctx.options, name, default)


def engine(ctx) -> str:
    """The engine process builds the cache with (``--engine``); ``native`` for every other action."""
    return _option(ctx, "engine", "native")


def expected_protocol(ctx) -> str | None:
    """The protocol ``--expect-validation-protocol`` names (process, upload); None when not given."""
    return _option(ctx, "expect_validation_protocol")


def task_metadata_given(ctx) -> bool:
    """Whether ``--task-metadata`` names the metadata of the run's tasks outside the suite (process)."""
    return _option(ctx, "task_metadata") is not None


def cache_root_option(ctx) -> str | None:
    """The cache root ``--cache-root`` names (process, upload); None for the default."""
    return _option(ctx, "cache_root")


def verified_allowed(ctx) -> bool:
    """Whether ``--verified`` allows publishing metadata with ``verified=True`` (upload)."""
    return bool(_option(ctx, "verified", False))


def at(metadata: MethodMetadata, message: str, field: str | None = None) -> Finding:
    """A finding located where ``field`` was written in info.py (the keyword, or the spread, descriptor or
    constant that supplied it), else at the declaration, when it was read statically."""
    steps = (metadata.origins or {}).get(field) if field else None
    where = site(steps or (metadata.origins or {}).get(CALL, ()))
    if where is not None:
        return Finding(message, path=where.path, line=where.line, col=where.col)
    if (metadata.source or "").rpartition(":")[0].endswith(".py"):
        placed = at_place(metadata.source, message)  # placed only when what follows the ':' is a line
        if placed.path:
            return placed
    return Finding(f"{metadata.source}: {message}" if metadata.source else message)

"""Which extra of the arena-checks distribution provides a missing module.

The core install (``pip install arena-checks``) runs the framework and the pre-commit hooks;
each workflow's heavy dependencies come with an extra (``[tabarena]``, ``[hf]``, ``[all]``).
When a command needs a module the installation lacks, the error names the extra to add,
read from the distribution's own metadata, so it cannot drift from pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable
from importlib import metadata

from checks.errors import MissingDependency

DISTRIBUTION = "arena-checks"
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def providers(module: str) -> list[str]:
    """The extras whose requirements include the distribution of top-level ``module``."""
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    wanted = _normal(module.partition(".")[0])
    out = []
    for line in requirements:
        name, extra = _NAME.match(line), _EXTRA.search(line)
        if name and extra and _normal(name[1]) == wanted and extra[1] not in out:
            out.append(extra[1])
    return out


def advice(modules: Iterable[str]) -> str:
    """The pip command that adds ``modules``: the extra providing all of them, else the union."""
    modules = list(modules)
    sets = [set(providers(m)) for m in modules]
    if not sets or not all(sets):
        return f"install {', '.join(modules)} (or pip install '{DISTRIBUTION}[all]')"
    common = sorted(set.intersection(*sets))
    if common:  # one extra provides them all (duckdb alone comes with either workflow's)
        return " or ".join(f"pip install '{DISTRIBUTION}[{extra}]'" for extra in common)
    return f"pip install '{DISTRIBUTION}[{','.join(sorted(set().union(*sets)))}]'"


def missing_error(what: str, modules: Iterable[str]) -> MissingDependency:
    modules = list(modules)
    return MissingDependency(
        f"{what} needs {', '.join(modules)}, which this installation does not have "
        f"(the core install runs only the framework and the pre-commit hooks): {advice(modules)}"
    )


def require(what: str, modules: Iterable[str]) -> None:
    """Raise :class:`MissingDependency` naming the extra when any of ``modules`` cannot be imported.

    ``find_spec`` looks the modules up without importing them, so the check costs next to nothing.
    """
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise missing_error(what, missing)

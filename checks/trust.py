"""Configuration files and local plugins another user controls are not used (git's safe.directory).

A rules.toml names plugins to import and waivers to apply, so whoever can write it runs code as
the user who runs ``checks`` (root, in a CI container). A file owned by another user, or lying
in a world-writable directory that is not the user's own (``/tmp`` and its like, where anyone may
put a rules.toml above your working directory), is refused before it is read, as git refuses a
repository another user owns. ``CHECKS_SAFE_DIRECTORIES`` opts in: a list of directories
(separated by ``os.pathsep``) whose files are trusted whoever owns them, or ``*`` for every one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from checks.errors import ConfigError

SAFE_ENV = "CHECKS_SAFE_DIRECTORIES"


def check(path: str | os.PathLike, what: str, environ: Mapping[str, str] | None = None) -> None:
    """Refuse ``path`` (a ``what``: "configuration", "local plugin") when another user could have written it.

    :raises ConfigError: (exit 2) naming the file, its owner or its directory, and the opt-in.
    """
    path = Path(path)
    env = os.environ if environ is None else environ
    me = os.geteuid()
    try:
        info = os.stat(path)
        folder = os.stat(path.parent)
    except OSError:  # missing or unreachable: the reader says so, with its own words
        return
    if info.st_uid != me:
        why = f"is owned by uid {info.st_uid}, not by you (uid {me})"
    elif folder.st_mode & stat.S_IWOTH and folder.st_uid != me:
        why = (
            f"lies in {path.parent}, which anyone may write (mode {stat.S_IMODE(folder.st_mode):o}) and you do not own"
        )
    else:
        return
    if _listed_safe(path, env):
        return
    raise ConfigError(
        f"{path}: this {what} {why}; like git's safe.directory, a {what} another user controls is not used "
        f"(it would run code as you). If you trust it, list its directory in {SAFE_ENV} "
        f"({SAFE_ENV}={path.parent.resolve()}, several separated by '{os.pathsep}', or '*' for all), or chown it"
    )


def _listed_safe(path: Path, env: Mapping[str, str]) -> bool:
    """Whether ``path`` lies in a directory ``$CHECKS_SAFE_DIRECTORIES`` lists (``*``: every one)."""
    listed = [entry.strip() for entry in env.get(SAFE_ENV, "").split(os.pathsep) if entry.strip()]
    if "*" in listed:
        return True
    real = path.resolve()
    return any(real.is_relative_to(Path(entry).expanduser().resolve()) for entry in listed)

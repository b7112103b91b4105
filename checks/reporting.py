"""The output options of every judging command (``checks run ACTION``, ``checks precommit ...``) and printing its report.

``--format`` picks what the terminal gets (human by default), ``--output-file`` (repeatable)
writes more formats to files, ``-q`` keeps only what failed, ``-v`` shows every verdict. The options store their values in
the click context, so a domain's ``checks precommit`` command needs no parameters for them.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import click

from checks import io, output, suggest
from checks.errors import UsageError
from checks.redact import redact

_KEY = "checks.output"


def _store(name: str):
    def callback(ctx: click.Context, param: click.Parameter, value):
        ctx.meta.setdefault(_KEY, {})[name] = value
        return value

    return callback


def _format(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    """``--format``, else ``$CHECKS_FORMAT`` (a CI job sets it once for every step), else human; a bad
    value of the variable is refused naming the variable, not an option the user never typed."""
    if value is None:
        value = os.environ.get("CHECKS_FORMAT", "").strip() or "human"
        if value not in output.FORMATS:
            hint = suggest.did_you_mean(value, output.FORMATS)
            raise UsageError(
                f"environment variable CHECKS_FORMAT={value!r}: expected one of {', '.join(output.FORMATS)}{hint}"
            )
    ctx.meta.setdefault(_KEY, {})["format"] = value
    return value


def _files(ctx: click.Context, param: click.Parameter, value):
    """The ``--output-file`` specs, each refused before anything runs when its directory cannot take it:
    a report that fails to be written after the action ran would say one exit code and end with another."""
    specs = [(fmt, _target(path)) for fmt, path in map(output.parse_output_file, value)]
    for _fmt, path in specs:
        _writable(path)
    ctx.meta.setdefault(_KEY, {})["files"] = specs
    return specs


#: what ``stat`` calls each kind of file an ``--output-file`` is never written over
_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


#: how many links an ``--output-file`` is followed through (the kernel's own limit)
MAX_HOPS = 40


def _hops(path: Path) -> list[str]:
    """``path`` and each link it passes through to its target, as written (``/proc/self/fd/1`` is a hop
    even when it resolves to a regular file: the file behind a descriptor is not the report's to replace)."""
    hops = [os.path.abspath(path)]
    while len(hops) <= MAX_HOPS and os.path.islink(hops[-1]):
        hops.append(os.path.normpath(os.path.join(os.path.dirname(hops[-1]), os.readlink(hops[-1]))))
    return hops


def _target(path: Path) -> Path:
    """The file an ``--output-file`` really writes: a symbolic link's final target (written through, so the
    link stays a link), refused when it is not a regular file or lies in a pseudo-filesystem.

    The write replaces its file atomically (a temporary sibling renamed over it); renamed over a link,
    a device or ``/proc/self/fd/1`` it would replace that entry itself, and as root ``json=/dev/stdout``
    would replace the machine's ``/dev/stdout``.
    """
    real = Path(os.path.realpath(path))
    shown = str(path) if real == path.absolute() else f"{path} (a link to {real})"
    root = next(filter(None, map(io.pseudo_root, _hops(path))), None)
    if root:
        raise UsageError(
            f"--output-file {shown}: it lies in the kernel's pseudo-filesystem {root}, whose entries are not "
            "files; name a regular file (print to stdout with --format instead)"
        )
    try:
        kind = _KINDS.get(stat.S_IFMT(os.stat(real).st_mode))
    except OSError:  # missing (created when written) or unreachable (refused by _writable)
        kind = None
    if kind:
        raise UsageError(f"--output-file {shown}: it is {kind}, not a regular file; name a regular file")
    return real


def params() -> list[click.Option]:
    return [
        click.Option(
            ["--format", "output_format"],
            type=click.Choice(output.FORMATS),
            default=None,
            expose_value=False,
            callback=_format,
            help="What the terminal gets: human, json, junit, sarif (2.1.0) or github (workflow annotations); "
            "default $CHECKS_FORMAT, else human.",
        ),
        click.Option(
            ["--statistics"],
            is_flag=True,
            expose_value=False,
            callback=_store("statistics"),
            help="Human output: end with the number of findings per rule, most first.",
        ),
        click.Option(
            ["--color"],
            type=click.Choice(COLOR),
            default="auto",
            show_default=True,
            expose_value=False,
            callback=_store("color"),
            help="Colour the human output: auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it), "
            "always, never.",
        ),
        click.Option(
            ["--output-file", "output_files"],
            multiple=True,
            metavar="[FORMAT=]PATH",
            expose_value=False,
            callback=_files,
            help="Also write a format to PATH (repeatable); the format is FORMAT= or the extension: "
            ".json json, .xml junit, .sarif sarif, .txt/.log human.",
        ),
        _flag("-q", "--quiet", help="Human output: only what failed, and the summary."),
        _flag("-v", "--verbose", help="Human output: every rule's verdict (checks run), a line on success (hooks)."),
    ]


def _flag(short: str, long: str, *, help: str) -> click.Option:
    """A flag kept in the context (under its long name) for :func:`emit`, not passed to the command."""
    return click.Option([short, long], is_flag=True, expose_value=False, callback=_store(long[2:]), help=help)


#: ``--color`` choices
COLOR = ("auto", "always", "never")


def _writable(path: Path) -> None:
    """Refuse an ``--output-file`` that cannot be written: a directory, or one whose nearest existing
    ancestor is not a writable directory (missing directories below it are created when writing)."""
    folder = path.absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if path.is_dir():
        why = "it is a directory"
    elif not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        why = f"{folder} is not a writable directory"
    else:
        return
    raise UsageError(f"--output-file {path}: cannot write it: {why}; name a file where you can write")


def emit(report: output.Report) -> None:
    """Print ``report`` in the chosen terminal format, then write each ``--output-file``."""
    chosen = click.get_current_context().meta.get(_KEY, {})
    fmt, quiet = chosen.get("format", "human"), bool(chosen.get("quiet"))
    if fmt == "human":
        _human(report, chosen, quiet=quiet)
    else:
        click.echo(redact(output.render(fmt, report)), nl=False)
    for file_format, path in chosen.get("files", ()):
        try:
            _target(path)  # again: the entry may have been replaced while the action ran
            output.write_files(report, [(file_format, path)], quiet=quiet, redact=redact)
        except OSError as exc:
            raise UsageError(f"--output-file {path}: cannot write it: {exc.strerror or exc}") from None


def _human(report: output.Report, chosen: dict, *, quiet: bool) -> None:
    """The human format on stdout, redacted line by line, in colour as ``--color`` says; then ``--statistics``."""
    color = _colored(chosen.get("color", "auto"))  # click.echo would strip the codes off a terminal: say it
    out = output.Lines(lambda line: click.echo(redact(line), color=color), color=color)
    output.human(report, out, quiet=quiet, verbose=bool(chosen.get("verbose")))
    if chosen.get("statistics"):
        for line in output.statistics(report):
            click.echo(line)


def _colored(choice: str) -> bool:
    """``--color``: ``auto`` colours a terminal unless ``NO_COLOR`` is set or ``TERM`` is ``dumb``, and
    anything when ``FORCE_COLOR`` is set (the conventions of no-color.org and force-color.org)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"

"""The output options of every judging command (``checks run ACTION``, ``checks precommit ...``) and printing its report.

``--format`` picks what the terminal gets (human by default), ``--output-file`` (repeatable)
writes more formats to files, ``-q`` keeps only what failed. The options store their values in
the click context, so a domain's ``checks precommit`` command needs no parameters for them.
"""

from __future__ import annotations

import sys

import click

from checks import output
from checks.errors import UsageError
from checks.redact import redact

_KEY = "checks.output"


def _store(name: str):
    def callback(ctx: click.Context, param: click.Parameter, value):
        ctx.meta.setdefault(_KEY, {})[name] = value
        return value

    return callback


def _files(ctx: click.Context, param: click.Parameter, value):
    specs = [output.parse_output_file(spec) for spec in value]
    ctx.meta.setdefault(_KEY, {})["files"] = specs
    return specs


def params() -> list[click.Option]:
    return [
        click.Option(["--format", "output_format"], type=click.Choice(output.FORMATS), default="human",
                     show_default=True, expose_value=False, callback=_store("format"),
                     help="What the terminal gets: human, json, junit, sarif (2.1.0) or github (workflow annotations)."),
        click.Option(["--output-file", "output_files"], multiple=True, metavar="[FORMAT=]PATH", expose_value=False,
                     callback=_files,
                     help="Also write a format to PATH (repeatable); the format is FORMAT= or the extension: "
                     ".json json, .xml junit, .sarif sarif, .txt/.log human."),
        click.Option(["-q", "--quiet"], is_flag=True, expose_value=False, callback=_store("quiet"),
                     help="Human output: only what failed, and the summary."),
    ]


def emit(report: output.Report) -> None:
    """Print ``report`` in the chosen terminal format, then write each ``--output-file``."""
    chosen = click.get_current_context().meta.get(_KEY, {})
    fmt, quiet = chosen.get("format", "human"), bool(chosen.get("quiet"))
    if fmt == "human" and report.command == "precommit":  # plain lines: a hook run never pays for rich
        for line in output.precommit_lines(report):
            click.echo(redact(line))
    elif fmt == "human":
        from rich.console import Console

        console = Console(file=_RedactingStream(sys.stdout), soft_wrap=True, highlight=False)
        console.on_broken_pipe = _broken_pipe  # rich would exit 1 on its own, which reads as "blocked"
        output.human(report, console, quiet=quiet)
    else:
        click.echo(redact(output.render(fmt, report)), nl=False)
    for file_format, path in chosen.get("files", ()):
        try:
            output.write_files(report, [(file_format, path)], quiet=quiet, redact=redact)
        except OSError as exc:
            raise UsageError(f"--output-file {path}: cannot write it: {exc.strerror or exc}") from None


def _broken_pipe() -> None:
    """The reader of stdout left: raised for the caller, which knows what the command did (docs/cli.md)."""
    raise BrokenPipeError(32, "the reader of stdout went away")


class _RedactingStream:
    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(redact(text))

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()


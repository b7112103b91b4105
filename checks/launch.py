"""The ``checks`` script: answer what needs no framework before importing it.

``--version`` prints the version; a listing (``checks rules``, ``checks rule CODE``) goes
through the replay cache (:mod:`checks.replay`); everything else is :func:`checks.cli.main`.
Only this entry point uses the cache: ``checks.cli.main(argv)`` called in-process never does.
"""

import sys


def main() -> None:
    args = sys.argv[1:]
    if args == ["--version"]:
        from checks import __version__

        sys.stdout.write(f"arena-checks {__version__}\n")
        sys.stdout.flush()
        raise SystemExit(0)
    from checks import replay

    if replay.is_listing(args):
        raise SystemExit(replay.run(args))
    from checks.cli import main as cli_main

    cli_main()

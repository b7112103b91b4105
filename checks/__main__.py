"""The ``checks`` script and ``python -m checks``: ``--version`` answered before importing the framework."""

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from checks import __version__

        sys.stdout.write(f"arena-checks {__version__}\n")
        raise SystemExit(0)
    import gc

    # Start-up (click, pluggy, attrs, the plugins) creates only long-lived objects: the cyclic
    # garbage collector would traverse them again and again and find nothing. checks.cli.main
    # moves them out of its reach (gc.freeze) and turns it back on before the command runs.
    gc.disable()
    from checks.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()

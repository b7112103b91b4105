"""The ``checks`` script and ``python -m checks``: ``--version`` answered before importing the framework."""

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from checks import __version__

        sys.stdout.write(f"arena-checks {__version__}\n")
        raise SystemExit(0)
    from checks.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()

"""The ``checks`` script and ``python -m checks``: ``--version`` answered before importing the framework."""

import os
import signal
import sys

from checks import __version__


def _aborted(signum, frame) -> None:
    """Ctrl-C or SIGTERM during start-up, before a command runs: nothing to undo, so no traceback."""
    os.write(2, b"checks: aborted\n")
    os._exit(2)


def _standard_streams() -> None:
    """Give a closed stdin, stdout or stderr (``checks ... >&-``) /dev/null.

    Otherwise the first file the run opens takes descriptor 1 and the report is written into it
    (the decision log, a cache file); and Python leaves ``sys.stdout`` None, so printing fails.
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - it lives as long as the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is not signal.SIG_IGN:  # a signal the parent ignores (nohup, `&`) stays ignored
            signal.signal(sig, _aborted)
    _standard_streams()
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"arena-checks {__version__}\n")
        raise SystemExit(0)

    from checks.cli import main as cli_main  # noqa: PLC0415 - after --version's answer and the quiet Ctrl-C handler

    cli_main()


if __name__ == "__main__":
    main()

"""``python -m checks`` runs the command line."""

from checks.cli import main

main()

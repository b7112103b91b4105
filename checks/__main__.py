"""``python -m checks`` runs the command line."""

from checks.launch import main

main()

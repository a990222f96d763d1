"""``python -m faim`` runs the command line."""

from faim.cli.main import script

script()

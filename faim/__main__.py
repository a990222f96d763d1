"""``python -m faim`` runs the command line."""

import sys

from faim.cli.main import main

sys.exit(main())

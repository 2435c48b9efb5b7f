"""``python -m aircher_mem``: the same as the ``aircher-mem`` command."""

import sys

from .interfaces.cli import main

sys.exit(main())

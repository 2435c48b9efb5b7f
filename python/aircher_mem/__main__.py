"""``python -m aircher_mem``: the same as the ``aircher-mem`` command."""

import sys

from .cli import main

sys.exit(main())

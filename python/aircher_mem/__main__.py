"""``python -m aircher_mem``: the same as the ``aircher-mem`` command."""

import sys

from .interfaces.dispatch import main

sys.exit(main())

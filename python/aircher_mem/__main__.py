"""``python -m aircher_mem``: the same as the ``aircher-mem`` command."""

from .interfaces.dispatch import console

console()

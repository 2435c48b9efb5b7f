"""Where a project's store is: the ``.aircher/`` folder, found from a folder upward.
Standard library only, so that a hook or a client of ``aircher-mem serve`` finds
the project without importing the service."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import StoreNotFoundError

__all__ = ["STORE_DIR", "find_root"]

#: The store's folder in a project.
STORE_DIR = ".aircher"


def find_root(start: str | os.PathLike[str] | None = None) -> Path:
    """The nearest folder holding ``.aircher/`` from ``start`` (default: the current
    directory) upward; :class:`StoreNotFoundError` if there is none."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / STORE_DIR).is_dir():
            return folder
    raise StoreNotFoundError(
        f"no aircher-mem store in {here} or its parents; run `aircher-mem index <repository>` first, or pass --root"
    )

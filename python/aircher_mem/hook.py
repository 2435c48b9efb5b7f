"""What ``aircher-mem hooks install`` has Claude Code run for each event:
``<python> -I -S <this file> EVENT``, the same as ``aircher-mem hook EVENT`` without
the console script's own imports or the processing of site-packages, which the
hook does only when it needs the full path (:func:`aircher_mem.interfaces.thin.site_packages`).
``-I`` keeps this file's folder, the current one and the environment's
``PYTHON*`` variables out of the way; the package is found from where this file is."""

from __future__ import annotations

import os
import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """``aircher-mem hook`` with ``argv`` (default: the command line's) after it."""
    from aircher_mem.interfaces.dispatch import main as dispatch

    return dispatch(["hook", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if folder not in sys.path:
        sys.path.append(folder)
    sys.exit(main())

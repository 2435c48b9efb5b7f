"""Bulk work on a large heap without the cyclic garbage collector's full passes.

Reading a long-term store of 100,000 turns and 100,000 memories makes about a
million Python objects (rows, their lists, the dicts that index them), and a
consolidation pass over it makes as many again. CPython's cyclic collector runs a
full pass, which walks every object alive, each time the objects that survived
younger passes grow by a quarter: during such work, again and again, and it finds
nothing (rows, tuples and dicts of strings and numbers hold no cycles; reference
counting frees them). On a 2-core machine that was half the time of a load and
an eighth of a consolidation pass.

:func:`paused` turns the collector off for the length of such work and on again
when the last one in the process ends, if it was on before the first began (so a
program that turned it off itself keeps it off). Reference counting still frees
everything as usual; only cycles made meanwhile wait for the next collection.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["paused"]

_lock = threading.Lock()
_depth = 0  # bulk work under way in this process (nested calls and threads)
_resume = False  # whether the collector was on when the first one began


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The cyclic garbage collector off while the block runs (see the module)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()

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
program that turned it off itself keeps it off). When the work left many objects
alive (``FULL_AFTER``), one full collection follows at once: it walks them once
(0.3 s for the 800,000 objects of a loaded 100K store), at a known time, where the
collector left on walks them again and again during the work, and merely turned on
again would walk them young in the next calls and in a full collection at some
later call. Reference counting frees everything as usual meanwhile; only cycles
made during the work wait for the collector.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["FULL_AFTER", "paused"]

#: Objects made (and still alive) by the work from which a full collection follows
#: it; fewer are left to the next young collection, which walks them cheaply.
FULL_AFTER = 50_000

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
        collect = False
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                collect = gc.get_count()[0] >= FULL_AFTER
                gc.enable()
        if collect:
            gc.collect()

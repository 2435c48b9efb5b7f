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
program that turned it off itself keeps it off). What the work made is then moved
to the oldest generation at once (``gc.freeze()`` then ``gc.unfreeze()``: two list
splices), so that the first young collections after it do not walk it all, paying
back what the pause saved; a program that froze objects itself keeps them frozen
(then that step is left out). Reference counting still frees everything as usual;
only cycles made meanwhile wait for the next full collection. That one comes when
CPython's rule says (the first after a large load walks what the load made once,
0.3 s for the 800,000 objects of a 100K store, at some later call); a full
collection run as each block ends instead walks the whole process each time (1 s
in a benchmark's process holding two loaded stores) where most blocks need none.
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
                if gc.get_freeze_count() == 0:  # (a program that froze objects keeps them frozen)
                    # What the work made is mostly meant to live: straight into the oldest
                    # generation (two list splices), rather than walked by the next young
                    # collections, which would pay the passes skipped here.
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()

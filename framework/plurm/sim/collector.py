"""The cyclic garbage collector's settings for a batch run (a trace replay).

A replay builds one large object graph that lives until it ends: every job, its request
and its record stay to the last, and the controller, cluster and plugins refer to each
other. Along the way it makes almost no cyclic garbage: what an event leaves behind is
freed by reference counting. Python's collector does not know that. Under its default
settings it walks the young objects every 700 allocations and, as the graph grows, walks
the whole of it again and again: about a tenth of a replay of LLNL-Atlas.

So while a replay runs, :func:`batch_collection` has the collector

- leave alone what existed before the replay (:func:`gc.freeze`): the trace and the
  configuration are walked no more;
- walk the young objects every 10,000 allocations and the older ones a hundred times
  less often, so that the simulation's own graph is walked about once.

It stays on: a plugin that makes reference cycles as it goes still has them collected,
by the young collections, where short-lived cycles die. Every setting is put back when the
last replay in the process ends (replays may run in threads side by side).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["batch_collection"]

#: Young collections every this many allocations, older ones this many times less often.
BATCH_THRESHOLDS = (10_000, 100, 100)

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] = ()
_froze = False


@contextlib.contextmanager
def batch_collection() -> Iterator[None]:
    """Run the body with the collector set for a batch run; see the module's docstring."""
    global _depth, _saved, _froze
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            # someone else's freeze (a server about to fork, say) is theirs to undo
            _froze = gc.get_freeze_count() == 0
            if _froze:
                gc.freeze()
            gc.set_threshold(*BATCH_THRESHOLDS)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved)
                if _froze:
                    gc.unfreeze()

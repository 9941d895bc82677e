"""The one way the cold start pauses Python's cyclic garbage collector (docs/benchmarks.md, section 2).

Loading a function's modules and building its composition root make almost no cyclic garbage, yet
their allocations start a hundred-odd full collections over everything loaded so far. What they make
lives as long as the process, so the collector is paused while they run, and what exists is then
frozen (``gc.freeze``) out of later collections' reach. A function's package pauses it
(``functions/*/__init__.py``), ``functions.common.lambda_entry`` resumes it; ``wiring.get_app``
builds within ``collector_paused``. A collector that someone else switched off stays off.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_paused = [False]  # by pause_collector, and not yet resumed


def pause_collector() -> bool:
    """Pause cyclic collection until ``resume_collector``; ``True`` if this call paused it (a collector
    already off, by us or anyone, stays as it is)."""
    if not gc.isenabled():
        return False
    gc.disable()
    _paused[0] = True
    return True


def resume_collector() -> None:
    """Resume the collection ``pause_collector`` paused, freezing what exists; idempotent."""
    if _paused[0]:
        _paused[0] = False
        gc.freeze()
        gc.enable()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """``pause_collector`` for the block, resumed afterwards (even if it fails) if this paused it."""
    paused = pause_collector()
    try:
        yield
    finally:
        if paused:
            resume_collector()

"""Lambda entry points: one folder per function, each thin (parse -> one core call -> map).

Cold start (docs/benchmarks.md, section 2): importing a function's package (``functions/inbound``,
``functions/enrollment``, ...) pauses the cyclic garbage collector (``pause_collector``), and
``functions.common.lambda_entry`` resumes it once the function's handler is defined
(``resume_collector``). Loading a function's modules makes almost no cyclic garbage, yet its
allocations started a hundred-odd collections over everything loaded so far; what the import made
lives as long as the process, so it is frozen (``gc.freeze``) out of later collections' reach.
"""

import gc

_paused = [False]  # by pause_collector, and not yet resumed


def pause_collector() -> None:
    """Pause cyclic collection until ``resume_collector``; a collector already off stays as it is."""
    if gc.isenabled():
        gc.disable()
        _paused[0] = True


def resume_collector() -> None:
    """Resume the collection ``pause_collector`` paused, freezing what exists; idempotent."""
    if _paused[0]:
        _paused[0] = False
        gc.freeze()
        gc.enable()

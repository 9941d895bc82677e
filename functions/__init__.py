"""Lambda entry points: one folder per function, each thin (parse -> one core call -> map).

Cold start (docs/benchmarks.md, section 2): importing this package pauses the cyclic garbage
collector, and ``resume_collector`` (called by ``functions.common.lambda_entry`` once a function's
handler is defined) resumes it. Loading a function's modules makes almost no cyclic garbage, yet its
allocations started a hundred-odd collections over everything loaded so far; what the import made
lives as long as the process, so it is frozen (``gc.freeze``) out of later collections' reach.
"""

import gc

_paused_by_import = gc.isenabled()  # a collector someone else switched off stays off
if _paused_by_import:
    gc.disable()


def resume_collector() -> None:
    """Resume the collection paused at import, freezing what exists; idempotent."""
    global _paused_by_import
    if _paused_by_import:
        _paused_by_import = False
        gc.freeze()
        gc.enable()

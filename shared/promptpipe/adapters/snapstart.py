"""Lambda SnapStart: run priming code before the snapshot is taken.

The Lambda Python runtime (3.12+) provides ``snapshot_restore_py``; hooks registered with
``register_before_snapshot`` run once, when a published version's snapshot is made, and never in a
function without SnapStart nor outside Lambda (where the module is absent and nothing is registered).
"""

from __future__ import annotations

from collections.abc import Callable


def register_before_snapshot(hook: Callable[[], None]) -> bool:
    """Register ``hook`` to run before the SnapStart snapshot; False where there is no such runtime."""
    try:
        from snapshot_restore_py import register_before_snapshot as register  # type: ignore[import-not-found]
    except ImportError:
        return False
    register(hook)
    return True

"""Argument types of the ``promptpipe`` command that check a number's range, so that a mistake is
the argument parser's one line (exit 2), never a run on a nonsensical value (docs/cli.md)."""

from __future__ import annotations

import argparse


def positive_count(value: str) -> int:
    """A count of at least 1 (participants, days): ``-3`` or ``0`` is a usage mistake, not a run."""
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of at least 1")
    return count


def window_minutes(value: str) -> int:
    """A flexible time window in minutes, as DAILY_PROMPT_FLEXIBLE_WINDOW_MINUTES accepts it (0-60)."""
    try:
        minutes = int(value)
    except ValueError:
        minutes = -1
    if not 0 <= minutes <= 60:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of minutes from 0 to 60")
    return minutes

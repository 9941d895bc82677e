"""Argument types of the ``promptpipe`` command that check a number's range, so that a mistake is
the argument parser's one line (exit 2), never a run on a nonsensical value (docs/cli.md)."""

from __future__ import annotations

import argparse


def _whole_number(value: str, low: int, high: int | None, refusal: str) -> int:
    """``value`` as a whole number from ``low`` to ``high`` (None: no upper bound); otherwise the
    parser's usage error, ``refusal`` after the value quoted."""
    try:
        number = int(value)
    except ValueError:
        number = low - 1
    if number < low or (high is not None and number > high):
        raise argparse.ArgumentTypeError(f"{value!r} {refusal}")
    return number


def positive_count(value: str) -> int:
    """A count of at least 1 (participants, days): ``-3`` or ``0`` is a usage mistake, not a run."""
    return _whole_number(value, 1, None, "is not a whole number of at least 1")


def window_minutes(value: str) -> int:
    """A flexible time window in minutes, as DAILY_PROMPT_FLEXIBLE_WINDOW_MINUTES accepts it (0-60)."""
    return _whole_number(value, 0, 60, "is not a number of minutes from 0 to 60")


def port_number(value: str) -> int:
    """A TCP port to listen on; 0 lets the system pick a free one."""
    return _whole_number(value, 0, 65535, "is not a port number (0-65535; 0 picks a free one)")

"""The package's log records as a test reads them (the ``logged`` fixture, registered in conftest)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


class Captured(logging.Handler):
    """The package's log records, read at the ``promptpipe`` logger itself: caplog's root handler
    misses them once a test has configured that logger not to propagate (Powertools)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def logged() -> Iterator[Captured]:
    handler = Captured()
    logger = logging.getLogger("promptpipe")
    # An earlier test's POWERTOOLS_LOG_LEVEL=ERROR may have left the package's logger at ERROR.
    previous = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(previous)

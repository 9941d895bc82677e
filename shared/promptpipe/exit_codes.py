"""The ``promptpipe`` command's exit codes and its one-line error (docs/cli.md).

A module of its own so that the command's parts (``promptpipe.local``, ``promptpipe.console``) raise
``CliError`` without importing ``promptpipe.cli.commands``, which imports them.
"""

from __future__ import annotations

from promptpipe.errors import PromptPipeError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_CONFIG = 3
EXIT_UNAVAILABLE = 4
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of our output (`| head`) closed it, as POSIX tools exit


class CliError(PromptPipeError):
    """A mistake or a failure the command reports in one line, with its exit code."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code

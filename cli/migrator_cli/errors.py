"""The one error the CLI shows as a single line (and a non-zero exit) instead of a traceback."""

from __future__ import annotations


class CliError(Exception):
    """A problem the operator can fix: the message says what and, where it helps, how."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code

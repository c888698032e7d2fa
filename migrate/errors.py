"""Errors the CLI turns into one-line messages and exit code 2."""
from __future__ import annotations

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2  # no findings | findings | usage or input error


class UsageError(Exception):
    """Bad input the user must fix: message names the file (and line)."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path, self.line = path, line
        where = f"{path}:{line}: " if path and line else f"{path}: " if path else ""
        super().__init__(f"{where}{message}")

"""Errors the CLI turns into one-line messages and exit code 2."""

from __future__ import annotations

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2  # no findings | findings | usage or input error
EXIT_INTERNAL = 3  # a bug of mps-migrate: one line on stderr (MPS_MIGRATE_DEBUG=1: the traceback)
DEBUG_ENV = "MPS_MIGRATE_DEBUG"

# Optional dependencies -> the extra that installs them (pyproject.toml; tests/test_install.py keeps them in sync).
EXTRA_OF_MODULE = {"torch": "verify", "numpy": "verify", "ziglang": "verify"}


class UsageError(Exception):
    """Bad input the user must fix: message names the file (and line)."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.path, self.line = path, line
        where = f"{path}:{line}: " if path and line else f"{path}: " if path else ""
        super().__init__(f"{where}{message}")


def install_hint(module: str) -> str:
    return f"pip install 'mps-migrate[{EXTRA_OF_MODULE[module]}]'"


def missing_extra(exc: ModuleNotFoundError, command: str) -> str | None:
    """The one-line message for a failed import of an optional dependency; None for any other module."""
    module = (exc.name or "").partition(".")[0]
    if module not in EXTRA_OF_MODULE:
        return None
    return f"{command} needs {module}, which is not installed: {install_hint(module)}"


def require_module(module: str) -> None:
    """Raise ModuleNotFoundError (with the install hint) unless the optional ``module`` is installed
    (for one that only runs in a subprocess, as ziglang's compiler)."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"No module named {module!r}: {install_hint(module)}", name=module)


def internal_error(exc: BaseException) -> str:
    """The one-line message for an unexpected exception: its type, text and the innermost place in mps-migrate."""
    import traceback
    from pathlib import Path

    package = Path(__file__).resolve().parent
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename)
        if path.is_relative_to(package):
            where = f" at {path.relative_to(package.parent).as_posix()}:{frame.lineno} in {frame.name}"
    text = " ".join(str(exc).split())[:300]
    return (
        f"internal error: {type(exc).__name__}{': ' + text if text else ''}{where}; please report it with the"
        f" command that failed ({DEBUG_ENV}=1 prints the traceback)"
    )


class RulesFailed(Exception):
    """Rules raised (bugs of mps-migrate): ``result`` (a lint.LintResult) holds the findings of the other
    rules, ``failed`` maps each failed rule's code to its exception.  Raised by lint.lint_tree once the other
    rules are done, so a lint result that lacks a rule's findings is never cached or used to fix."""

    def __init__(self, result, failed: dict[str, Exception]) -> None:
        super().__init__(", ".join(f"{code}: {exc!r}" for code, exc in failed.items()))
        self.result, self.failed = result, failed

    def lines(self) -> list[str]:
        """One line per failed rule, as the CLI prints them."""
        return [
            f"rule {code} failed, so its findings are missing: {internal_error(exc)}"
            for code, exc in self.failed.items()
        ]

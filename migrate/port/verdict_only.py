"""Planning a port for its verdict alone (``port --list``): whether each family ports, and why not.

The generated text's formatting (clang-format, one process per chunk) and the worked examples of behaviour
changes (evaluated with torch) change no verdict: while ``verdict_only()`` holds they are left out.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

_ON: ContextVar[bool] = ContextVar("mps_migrate_verdict_only", default=False)


def active() -> bool:
    return _ON.get()


@contextmanager
def verdict_only():
    token = _ON.set(True)
    try:
        yield
    finally:
        _ON.reset(token)

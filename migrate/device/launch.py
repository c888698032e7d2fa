"""Launch geometry shared by the backends (dispatchThreads semantics)."""

from __future__ import annotations

from numbers import Integral

from .errors import KernelArgumentError

MAX_THREADS_PER_GROUP = 1024


def _dims(value, what: str) -> tuple[int, int, int]:
    if isinstance(value, Integral) and not isinstance(value, bool):
        items = [int(value)]
    elif isinstance(value, (tuple, list)) and 1 <= len(value) <= 3:
        items = list(value)
        if not all(isinstance(v, Integral) and not isinstance(v, bool) for v in items):
            raise KernelArgumentError(f"{what} must hold integers, got {value!r}")
        items = [int(v) for v in items]
    else:
        raise KernelArgumentError(f"{what} must be an int or a list of 1-3 ints, got {value!r}")
    if any(v < 0 for v in items) or any(v >= 2**32 for v in items):
        raise KernelArgumentError(f"{what} out of range: {value!r}")
    return tuple(items + [1] * (3 - len(items)))  # type: ignore[return-value]


def default_threads(args) -> int:
    for a in args:
        if hasattr(a, "numel") and callable(a.numel):
            return int(a.numel())
        if hasattr(a, "size") and hasattr(a, "ndim"):
            return int(a.size)
    raise KernelArgumentError("threads= not given and no tensor argument to take numel() from")


def geometry(args, threads, group_size) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(threads, group) as 3-tuples; `threads` is the TOTAL thread count."""
    t = _dims(default_threads(args) if threads is None else threads, "threads")
    if group_size is None:
        g = (max(1, min(MAX_THREADS_PER_GROUP, t[0])), 1, 1)
    else:
        g = _dims(group_size, "group_size")
    if any(v == 0 for v in g):
        raise KernelArgumentError(f"group_size must be positive, got {group_size!r}")
    if g[0] * g[1] * g[2] > MAX_THREADS_PER_GROUP:
        raise KernelArgumentError(
            f"group_size {list(g)} has {g[0] * g[1] * g[2]} threads; Metal allows at most {MAX_THREADS_PER_GROUP}"
        )
    return t, g

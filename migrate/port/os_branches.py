"""OS-version branches inside graph code (rules/mpsgraph.yaml ``os_version``): the port takes the
branch for the newest macOS -- an SDK ``#ifdef __MAC_15_0`` is taken as defined, a run-time
``if (is_macos_13_or_newer(...))`` as true -- and notes the choice."""

from __future__ import annotations

import re
from functools import lru_cache

from migrate.tables import load_table


@lru_cache(maxsize=1)
def _rules() -> dict:
    return load_table("mpsgraph.yaml").get("os_version") or {}


def sdk_condition(directive: str) -> bool | None:
    """True: a ``#if``/``#ifdef`` on an SDK version macro (taken); None: another directive."""
    m = re.match(r"#\s*(ifdef|if|elif)\b(.*)", directive)
    if m is None:
        return None
    names = re.findall(r"[A-Za-z_]\w*", m.group(2))
    names = [n for n in names if n != "defined"]
    if names and all(any(n.startswith(p) for p in _rules().get("preprocessor", ())) for n in names):
        return True
    return None


def host_os_call(name: str | None) -> bool:
    return bool(name) and name.rsplit("::", 1)[-1] in _rules().get("host_calls", ())

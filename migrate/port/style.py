"""The convention a port writes in: migrate.conventions.target's reading of the tree's target files, with a
target that fits none refused as a PortBlocked."""

from __future__ import annotations

from migrate.conventions import target
from migrate.port.translate import PortBlocked


def detect(ix, arity: int) -> target.Target:
    try:
        return target.detect(ix, arity)
    except target.NoTarget as exc:
        raise PortBlocked(exc.reason, exc.construct, None) from None

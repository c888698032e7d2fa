"""Ports of families whose dispatch line MPS already shares with CPU (``CPU, CUDA, MPS: ceil_out``):
the MPSGraph implementation is the host function registered for the stub (often through a
registration macro, e.g. ``REGISTER_MPS_UNARY_STUB(ceil, ceil)`` expanding to a function and its
``REGISTER_DISPATCH``).  The port registers the new kernel for the stub and drops that registration;
the dispatch line stays as it is.
"""

from __future__ import annotations

from migrate.fixes import FixBuilder
from migrate.model import Edit
from migrate.port.translate import PortBlocked


def replaced(impls) -> list:
    """The MPSGraph stub registrations the port replaces."""
    return [im.registration for im in impls if im.registration is not None]


def unregister_edits(ix, impls) -> list[Edit]:
    """Delete each replaced registration's statement (its whole line, with a trailing ``;``)."""
    edits, seen = [], set()
    for reg in replaced(impls):
        if (reg.path, reg.span.start) in seen:
            continue
        seen.add((reg.path, reg.span.start))
        data = ix.tree.sources[reg.path]
        start = data.rfind(b"\n", 0, reg.span.start) + 1
        end = FixBuilder.line_end(data, reg.span.end - 1)
        if data[start : reg.span.start].strip() or data[reg.span.end : end].strip() not in (b"", b";"):
            raise PortBlocked(
                f"{reg.function}'s registration shares its line with other code", "registration layout", reg.span.where
            )
        edits.append(Edit(reg.path, start, end, ""))
    return edits

"""Port an MPSGraph operator family to a native Metal kernel (``mps-migrate port``).

Pipeline: ``locate`` (family -> implementations -> graph code) -> ``objc`` (parser) ->
``translate`` (expression DAG, ``dag``) -> ``emit`` (functor, registrations) ->
``patch`` (text edits); ``listing`` for ``--list``; ``selectors`` (every selector the graph code
sends, to name what blocks a port); ``skeleton`` for ``--skeleton``.  A graph reading one host
Scalar (a constant from ``s.to<double>()`` or a scalar placeholder) becomes an alpha kernel
(``REGISTER_*_ALPHA_OP``, ``exec_*_kernel(iter, "name", alpha)``).  The selector table is
rules/mpsgraph.yaml.
"""

from __future__ import annotations


def portability(ix, family: str) -> tuple[bool, list[str]]:
    """(portable, reasons) of one family of the index's tree, as ``port --list`` reports it."""
    from migrate.port.listing import verdict

    v = verdict(ix, family)
    if v.status == "portable":
        return True, []
    where = f" ({v.where})" if v.where else ""
    return False, [f"{v.status}: {v.detail}{where}"]

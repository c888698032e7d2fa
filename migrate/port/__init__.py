"""Port an MPSGraph operator family to a native Metal kernel (``mps-migrate port``).

Pipeline: ``locate`` (family -> implementations -> graph code) -> ``objc`` (parser) ->
``translate`` (expression DAG, ``dag``) -> ``emit`` (functor, registrations) ->
``patch`` (text edits); ``listing`` for ``--list``.  The selector table is rules/mpsgraph.yaml.
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

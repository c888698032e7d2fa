"""Which names of common_mps.py are xfail/skip tables: one fact for both of its readers (xfail_reader, with
ast, and xfail_cst, with libcst)."""

from __future__ import annotations

SUPPORTED_COMPLEX = "SUPPORTED_COMPLEX_OPS"


def is_table_name(name: str) -> bool:
    """XFAILLIST / SKIPLIST as a word of the name (UNIMPLEMENTED_XFAILLIST,
    XFAILLIST_GRAD, UNIMPLEMENTED_XFAILLIST_SPARSE), or a SUPPORTED_COMPLEX_OPS table (AFTER_MACOS_14_0_... too)."""
    if name == SUPPORTED_COMPLEX or name.endswith("_" + SUPPORTED_COMPLEX):
        return True
    words = name.split("_")
    return "XFAILLIST" in words or "SKIPLIST" in words

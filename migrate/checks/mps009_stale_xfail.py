"""MPS009: common_mps.py expects failure for an op that is native Metal now."""

XFAIL_SUFFIX = "XFAILLIST"


def check(ix, rule):
    cm = ix.tree.common_mps
    if cm is None:
        return
    for entry in cm.entries:
        if not entry.table.endswith(XFAIL_SUFFIX):
            continue
        family = ix.family_of_opinfo(entry.key)
        if family is None or not ix.family_is_native_metal(family):
            continue
        yield rule.finding(entry.span, key=entry.key, table=entry.table, family=family,
                           fix=ix.fixes.remove_xfail(entry))

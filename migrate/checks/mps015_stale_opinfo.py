"""MPS015: MPS expected failures/skips in the OpInfo database for ops now native Metal."""
from migrate.tables import load_table


def check(ix, rule):
    if not ix.tree.opinfo_files:
        return
    from migrate.read.opinfo_reader import find_entries  # libcst: imported only when needed

    table = load_table("opinfo.yaml")
    affected = {(cls, t) for cls, tests in table["affected_tests"].items() for t in tests}
    native = [fam for fam in ix.families if ix.family_is_native_metal(fam)]
    names = {n for fam in native for n in ix.opinfo_names(fam)}
    for path in ix.tree.opinfo_files:
        for entry in find_entries(ix.tree.sources[path], path, names):
            if entry.kind in table["skip_kinds"]:
                continue
            family = ix.family_of_opinfo(entry.aten_name or entry.name)
            for deco in entry.mps_decorations:
                if (deco.cls, deco.test) not in affected:
                    continue
                what = f"MPS {deco.decorator} of {deco.cls}.{deco.test} for {entry.formatted_name}"
                yield rule.finding(deco.span, kind=deco.decorator, cls=deco.cls, test=deco.test,
                                   opinfo=entry.formatted_name, family=family,
                                   fix=ix.fixes.remove_decoration(deco, what))

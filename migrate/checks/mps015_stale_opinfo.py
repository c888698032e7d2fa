"""MPS015 stale-opinfo-expectation: MPS expected failures/skips in the OpInfo database for ops now native Metal.

Severity: warning. Reads: opinfo, yaml, host. Fix safety: unsafe.

## What it does
Finds `DecorateInfo(unittest.expectedFailure | unittest.skip(...), cls, test,
device_type='mps')` entries in the OpInfo database for operators whose
overloads all route to native Metal, limited to the tests a migration
affects (TestConsistency.test_output_match / test_output_grad_match,
TestCommon.test_dtypes).

## Why it matters
The OpInfo expectation keeps the new kernel out of the very comparison with
CPU that proves the migration (test_output_match), or hides a dtype the
kernel now supports.

## Example
BinaryUfuncInfo('atan2',
    skips=(
        DecorateInfo(unittest.expectedFailure, 'TestConsistency', 'test_output_match',
                     device_type='mps'),        # MPS015 once atan2 is native Metal
    )),

## Fix
Remove the DecorateInfo (the enclosing tuple stays a valid tuple; comments
stay). Unrelated MPS expectations (test_out, whole-class decorations) stay.
"""

from migrate.model import Edit, Fix, MpsDecoration
from migrate.rulebook import Rule
from migrate.tables import load_table


def check(ix):
    if not ix.tree.opinfo_files:
        return
    from migrate.read.opinfo_reader import find_entries  # imported only when the tree has OpInfo files

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
                yield RULE.finding(
                    deco.span,
                    message(deco.decorator, deco.cls, deco.test, entry.formatted_name, family),
                    family=family,
                    fix=remove_decoration(ix, deco, what),
                )


def remove_decoration(ix, deco: MpsDecoration, what: str) -> Fix:
    s, e = ix.fixes.element_range(ix.tree.sources[deco.path], deco.span.start, deco.span.end)
    edits = [Edit(deco.path, s, e, "")]
    if deco.comma_fix is not None:
        edits.append(Edit(deco.path, deco.comma_fix, deco.comma_fix, ","))  # keep a 1-tuple a tuple
    return Fix(f"remove {what}", tuple(sorted(edits, key=lambda x: x.start)), safe=False)


def message(kind: str, cls: str, test: str, opinfo: str, family: str) -> str:
    return f"{kind} of {cls}.{test} on MPS for {opinfo}, but every MPS overload of {family} routes to native Metal"


RULE = Rule.documented(__name__, message, check)

"""MPS022: a dispatch key named again on a later line of the same entry (torchgen keeps the last)."""

from migrate.model import DispatchLine, Edit, Fix, NativeEntry, Severity
from migrate.rulebook import Doc, FixSafety, Rule


def check(ix):
    for e in ix.tree.yaml.entries:
        if len(e.dispatch) < 2:
            continue
        winners = {key: line for line in e.dispatch for key in line.keys}  # the last line naming each key
        for line in e.dispatch:
            shadowed = [k for k in dict.fromkeys(line.keys) if winners[k] is not line]
            for key in shadowed:
                later = winners[key]
                yield RULE.finding(
                    line.key_spans[line.keys.index(key)],
                    message(key, later.line, later.kernel_name),
                    overload=e.overload_name,
                    kernel=line.kernel_name,
                    fix=_drop(ix, e, line, key, later, whole=len(shadowed) == len(set(line.keys))),
                )


def _drop(ix, entry: NativeEntry, line: DispatchLine, key: str, later: DispatchLine, whole: bool) -> Fix:
    """Remove ``key`` from ``line`` (the whole line when every key on it is named again later): what torchgen
    reads stays the same.  Safe when both lines name one kernel; else the later line may be the stale one."""
    description = f"remove the {key} of {entry.overload_name}'s line {line.line}, which line {later.line} overrides"
    safe = line.kernel_name == later.kernel_name
    if whole:
        fix = ix.fixes.remove_line(line.span, description)
        return Fix(description, fix.edits, safe)
    spans = line.key_spans
    k = line.keys.index(key)
    start, end = (spans[k - 1].end, spans[k].end) if k else (spans[0].start, spans[1].start)
    return Fix(description, (Edit(line.span.path, start, end, ""),), safe)


def message(key: str, later_line: int, later_kernel: str) -> str:
    return f"{key} is given again on line {later_line} ({later_kernel}); torchgen keeps the last, so this {key} has no effect"


RULE = Rule(
    code="MPS022",
    name="shadowed-dispatch-key",
    severity=Severity.WARNING,
    reads=("yaml",),
    message=message,
    check=check,
    doc=Doc(
        summary="""\
Finds a dispatch key that a later line of the same `dispatch:` block names
again. torchgen reads the lines in order and each sets its keys' kernels, so
only the last mention of a key counts.
""",
        why="""\
The usual cause is a half-done edit: MPS added to the shared line
(`CPU, CUDA, MPS: foo_out`) while the old `MPS: foo_out_mps` line below it
stays. The build keeps routing MPS to the MPSGraph kernel, and nothing says
so.
""",
        example="""\
dispatch:
  CPU, CUDA, MPS: atan2_out    # MPS022: MPS is given again on line 4
  MPS: atan2_out_mps           # this line wins
""",
        fix="""\
Removes the overridden key from the earlier line (the whole line when each of
its keys is given again later), which changes nothing torchgen generates. Safe
when both lines name the same kernel. Otherwise unsafe: if the later line is
the stale one, delete that line instead.
""",
        fix_safety=FixSafety.SAFE,
    ),
)

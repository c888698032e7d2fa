"""MPS022 shadowed-dispatch-key: a dispatch key named again on a later line of the same entry (torchgen keeps the last).

Severity: error. Reads: yaml. Fix safety: mixed.

## What it does
Finds a dispatch key that a later line of the same `dispatch:` block names
again. torchgen reads the lines in order and each sets its keys' kernels, so
only the last mention of a key counts; a line whose keys are written exactly as
on a later line is a duplicate key of the YAML map, and torchgen refuses the
whole file.

## Why it matters
The usual cause is a half-done edit: MPS added to the shared line
(`CPU, CUDA, MPS: foo_out`) while the old `MPS: foo_out_mps` line below it
stays. The build keeps routing MPS to the MPSGraph kernel, and nothing says
so.

## Example
dispatch:
  CPU, CUDA, MPS: atan2_out    # MPS022: MPS is given again on line 4
  MPS: atan2_out_mps           # this line wins
dispatch:
  MPS: erfinv_out_mps          # MPS022: a duplicate key, torchgen stops here
  MPS: erfinv_out_mps

## Fix
Removes the overridden key from the earlier line (the whole line when each of
its keys is given again later, or when it is a duplicate key): torchgen then
generates what the later lines say. Safe when both lines name the same kernel.
Otherwise unsafe: if the later line is the stale one, delete that line instead.
One case is told apart: MPS joined the shared line (`CPU, CUDA, MPS: foo_out`)
and the later line is the old MPS-only line of an MPSGraph kernel, while MPS
would run native Metal through the shared kernel (its stub's MPS registration,
as MPS001's fix checks it). That later line is deleted: safe when the kernels
the registration launches are named and registered, else unsafe.
"""

import dataclasses

from migrate.checks.mps001_half_migrated import stale_mps_line
from migrate.index import MPS
from migrate.model import DispatchLine, Edit, Fix, NativeEntry
from migrate.rulebook import Rule


def check(ix):
    for e in ix.tree.yaml.entries:
        if len(e.dispatch) < 2:
            continue
        keys = [key for line in e.dispatch for key in line.keys]
        if len(set(keys)) == len(keys):
            continue  # no key named twice (the spans, made when first read, stay unmade)
        data = ix.tree.sources[e.span.path]
        written = [data[d.key_spans[0].start : d.key_spans[-1].end] for d in e.dispatch]
        for i, line in enumerate(e.dispatch):
            shadowed = [k for k in dict.fromkeys(line.keys) if e.kernel_for(k) is not line]  # torchgen's rule
            again = next((d for d, w in zip(e.dispatch[i + 1 :], written[i + 1 :]) if w == written[i]), None)
            if again is not None:  # one mapping key twice: torchgen's and ruamel's loaders refuse the yaml
                yield RULE.finding(
                    line.span,
                    message(written[i].decode(), again.line, DUPLICATE),
                    overload=e.overload_name,
                    kernel=line.kernel_name,
                    fix=_drop(ix, e, line, again),
                )
                continue
            for key in shadowed:
                later = e.kernel_for(key)
                yield RULE.finding(
                    line.key_spans[line.keys.index(key)],
                    message(
                        key, later.line, f"torchgen keeps that line's {later.kernel_name}, so this {key} has no effect"
                    ),
                    overload=e.overload_name,
                    kernel=line.kernel_name,
                    fix=(key == MPS and stale_mps_line(ix, e, line, later))
                    or _drop(ix, e, line, later, None if len(shadowed) == len(set(line.keys)) else key),
                )


DUPLICATE = 'one key of the dispatch map twice, which torchgen refuses ("Found a duplicate key in the yaml")'


def _drop(ix, entry: NativeEntry, line: DispatchLine, later: DispatchLine, key: str | None = None) -> Fix:
    """Remove ``key`` from ``line`` (None: the whole line, when every key on it is named again later): what
    torchgen reads stays the same.  Safe when both lines name one kernel; else the later line may be the stale
    one."""
    what = "line" if key is None else key
    description = f"remove the {what} of {entry.overload_name}'s line {line.line}, which line {later.line} overrides"
    safe = line.kernel_name == later.kernel_name
    if key is None:
        return dataclasses.replace(ix.fixes.remove_line(line.span, description), safe=safe)
    spans = line.key_spans
    k = line.keys.index(key)
    start, end = (spans[k - 1].end, spans[k].end) if k else (spans[0].start, spans[1].start)
    return Fix(description, (Edit(line.span.path, start, end, ""),), safe)


def message(key: str, later_line: int, effect: str) -> str:
    return f"{key} is given again on line {later_line}: {effect}"


RULE = Rule.documented(__name__, message, check)

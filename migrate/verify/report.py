"""Render a verify Report: a plain-text table (default) or JSON."""

from __future__ import annotations

import json
import re

from migrate.verify.compare import Stats
from migrate.verify.dtypes import table
from migrate.verify.run import Cell, Report, first_failure


def upstream(family: str, c: Cell) -> dict | None:
    """The rules/verify.yaml ``upstream`` entry explaining a FAIL cell (the tree's own behaviour, a Mac's too)."""
    if c.status != "FAIL":
        return None
    text = first_failure(c)
    for e in table().get("upstream") or ():
        names = {"family": family, "dtype": c.dtype, "layout": c.layout}
        if all(re.fullmatch(e.get(k, ".*"), v) for k, v in names.items()) and re.search(e["cause"], text):
            return {"what": e["what"], "link": e["link"]}
    return None


def stale_fix(c: Cell) -> str:
    """What to edit for an XPASS cell: MPS009's fix (it lints common_mps.py; older trees keep the tables in
    test/test_mps.py, which it does not read)."""
    from migrate.tree import COMMON_MPS_REL

    e = c.expected
    edit = f"remove {c.dtype} from the entry at {e.path}:{e.line}"
    if e.path == COMMON_MPS_REL:
        return f"{edit} (MPS009's fix)"
    return f"{edit} (MPS009's fix, by hand: MPS009 lints {COMMON_MPS_REL}, which this tree predates)"


def _num(x: float) -> str:
    return "0" if x == 0 else f"{x:.3g}"


def _stats_json(st: Stats | None):
    if st is None:
        return None
    return {
        "elements": st.elements,
        "mismatches": st.mismatches,
        "max_abs": st.max_abs,
        "max_rel": st.max_rel,
        "max_ulp": st.max_ulp,
        "signed_zeros": st.signed_zeros,
        "excused": st.excused,
        "notes": st.notes,
        "first_failure": None
        if st.first is None
        else {
            "index": list(st.first.index),
            "actual": _jsonable(st.first.actual),
            "expected": _jsonable(st.first.expected),
            "inputs": [_jsonable(v) for v in st.first.inputs],
            "reason": st.first.reason,
        },
    }


def _jsonable(v):
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return repr(v)
    if isinstance(v, complex):
        return [_jsonable(v.real), _jsonable(v.imag)]
    return v


def to_json(r: Report) -> str:
    src = r.source
    doc = {
        "path": "emulation",  # verify's model of the host launch; `verify --host` reports "path": "host"
        "family": r.family,
        "seed": r.seed,
        "references": r.references,
        "ok": r.ok,
        "kernel": None
        if src is None
        else {
            "name": src.name,
            "helper": src.helper,
            "file": src.path,
            "call_site": src.call_site,
            "convention": src.convention,
        },
        "compile_errors": [f.json() for f in r.compile_failures],
        "notes": r.notes,
        "summary": _summary_json(r),
        "overloads": r.overloads,
        "cells": [
            {
                "dtype": c.dtype,
                "layout": c.layout,
                "status": c.status,
                "cases": c.cases,
                "passed": c.passed,
                "samples": c.samples,
                "skip_reasons": c.skip_reasons,
                "kernels": sorted(c.kernels),
                "stats": _stats_json(c.stats),
                "failures": c.failures,
                "skipped": c.skipped,
                "expected": c.expected.json() if c.expected is not None else None,
                "upstream": upstream(r.family, c),
                "references_disagree": _stats_json(c.old_vs_cpu),
            }
            for c in r.cells
        ],
    }
    return json.dumps(doc, indent=2)


def _summary_json(r: Report) -> dict:
    own, own_ok = r.totals(opinfo=False)
    ran, ok = r.totals(opinfo=True)
    statuses = [c.status for c in r.cells]
    return {
        "cells": {s: statuses.count(s) for s in dict.fromkeys(statuses)},
        "cases": {"ran": own, "passed": own_ok},
        "opinfo": {
            "opinfos": r.opinfo_names,
            "samples": sum(c.samples for c in r.cells),
            "ran": ran,
            "passed": ok,
            "skipped": _skips(r),
        },
    }


def _skips(r: Report) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in r.cells:
        for reason, n in c.skip_reasons.items():
            out[reason] = out.get(reason, 0) + n
    return out


def summary_lines(r: Report) -> list[str]:
    own, own_ok = r.totals(opinfo=False)
    lines = [f"own cases: {own} ran, {own_ok} passed"]
    if r.opinfo_names:
        ran, ok = r.totals(opinfo=True)
        drawn = sum(c.samples for c in r.cells)
        skips = _skips(r)
        why = "; ".join(f"{n} {reason}" for reason, n in sorted(skips.items(), key=lambda x: -x[1]))
        lines.append(
            f"OpInfo samples ({', '.join(r.opinfo_names)}): {drawn} drawn, {ran} ran, {ok} passed, "
            f"{sum(skips.values())} skipped" + (f" ({why})" if why else "")
        )
    lines += [f"overload {o}" for o in r.overloads]
    return lines


def skip_reason(c: Cell) -> str:
    if c.skipped:
        return "; ".join(c.skipped)
    if c.skip_reasons:
        return "; ".join(f"{n} {why}" for why, n in c.skip_reasons.items())
    return "no case of this layout for this op (its arity or dtype)" if not c.samples else "every sample skipped"


def compile_error_line(f) -> str:
    """The compiler's error, once, with the cells it blocks (by dtype)."""
    by: dict[str, list[str]] = {}
    for dtype, layout in f.blocks:
        by.setdefault(dtype, []).append(layout)
    blocks = "; ".join(f"{d}: {', '.join(ls)}" for d, ls in by.items()) or "no cell"
    return (
        f"COMPILE ERROR {f.where}: {f.message} (the file does not compile; it blocks {len(f.blocks)} cell(s): {blocks})"
    )


def _row(c: Cell) -> list[str]:
    st = c.stats
    worst = f"abs {_num(st.max_abs)} rel {_num(st.max_rel)} ulp {st.max_ulp}" if c.cases else ""
    cases = f"{c.passed}/{c.cases}" if c.cases else "0"
    return [c.dtype, c.layout, c.status, cases, worst, ", ".join(sorted(c.kernels))]


def to_text(r: Report) -> str:
    src = r.source
    lines = []
    if src is not None:
        lines.append(
            f'verify {r.family}: {src.helper}(iter, "{src.name}") at {src.call_site}; kernels from {src.path}'
            f" (launch convention {src.convention})"
        )
    lines += [compile_error_line(f) for f in r.compile_failures]
    lines.append(f"references: {', '.join(r.references)}; seed {r.seed}")
    lines.append("path: emulation (verify's model of the tree's host launch; --host runs the tree's own host code)")
    head = ["dtype", "layout", "result", "passed", "worst error", "kernels"]
    rows = [_row(c) for c in r.cells]
    widths = [max(len(x) for x in col) for col in zip(head, *rows)] if rows else [len(h) for h in head]
    fmt = lambda cols: "  ".join(x.ljust(w) for x, w in zip(cols, widths)).rstrip()  # noqa: E731
    lines += [fmt(head), fmt(["-" * w for w in widths])] + [fmt(x) for x in rows]
    fails = [c for c in r.cells if c.status == "FAIL"]
    known = 0
    for c in fails:
        lines.append(f"FAIL {c.dtype} {c.layout}: {first_failure(c)}")
        why = upstream(r.family, c)
        if why is not None:
            known += 1
            lines.append(f"  upstream: {why['what']} ({why['link']})")
    for c in r.cells:
        if c.status == "XFAIL":
            lines.append(
                f"XFAIL {c.dtype} {c.layout}: the tree expects it: {c.expected.describe()}; {first_failure(c)}"
            )
        elif c.status == "XPASS":
            lines.append(
                f"XPASS {c.dtype} {c.layout}: every sample passed, but the tree expects a failure: "
                f"{c.expected.describe()}; the expectation is stale: {stale_fix(c)}"
            )
    for c in r.cells:
        if c.status == "skip":
            lines.append(f"skip {c.dtype} {c.layout}: {skip_reason(c)}")
    for c in r.cells:
        if c.stats.signed_zeros:
            lines.append(f"note {c.dtype} {c.layout}: {c.stats.signed_zeros} signed zero(s) differ (0.0 vs -0.0)")
        if c.stats.excused:
            lines.append(
                f"note {c.dtype} {c.layout}: {c.stats.excused} element(s) judged by another answer of "
                f"torch CPU (rules/verify.yaml reference_policy): " + "; ".join(c.stats.notes)
            )
        if c.old_vs_cpu is not None and not c.old_vs_cpu.ok and c.old_vs_cpu.first is not None:
            lines.append(
                f"note {c.dtype} {c.layout}: the old MPSGraph path differed from CPU here: "
                f"{c.old_vs_cpu.first.describe()}"
            )
    lines += [f"note: {n}" for n in r.notes]
    lines += summary_lines(r)
    passed = sum(c.status == "pass" for c in r.cells)
    skipped = sum(c.status == "skip" for c in r.cells)
    blocked = sum(c.status == "BLOCKED" for c in r.cells)
    xfail, xpass = (sum(c.status == s for c in r.cells) for s in ("XFAIL", "XPASS"))
    extra = (f"{xfail} xfail, " if xfail else "") + (f"{xpass} xpass, " if xpass else "")
    lines.append(
        f"{passed} passed, {len(fails)} failed"
        + (f" ({known} upstream behaviour: rules/verify.yaml upstream)" if known else "")
        + ", "
        + (f"{blocked} blocked, " if blocked else "")
        + extra
        + f"{skipped} skipped (dtype x layout)"
    )
    if not r.ran and not fails and not blocked:
        lines.append("nothing was verified: no case ran (exit 2)")
    return "\n".join(lines) + "\n"

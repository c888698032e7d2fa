"""Terminal summary of a status (and of a comparison), within WIDTH columns."""

from __future__ import annotations

import textwrap
from collections import Counter

from migrate.status.compare import Progress
from migrate.status.counting import KINDS, FamilyStatus, Status

WIDTH = 160
SHORT = {
    "metal-shared": "shared",
    "metal-mps": "mps-mtl",
    "mpsgraph": "graph",
    "delegating": "deleg",
    "composite": "comp",
    "undefined": "broken",
    "none": "none",
}


def clip(text: str, width: int = WIDTH) -> str:
    """``text`` cut to ``width`` characters, ending with an ellipsis when cut."""
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _wrap(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent="    ", break_on_hyphens=False) or [""]


def port_cell(f: FamilyStatus) -> str:
    if f.portable is None:
        return "unknown" + (f" ({'; '.join(f.reasons)})" if f.reasons else "")
    return "yes" if f.portable else "no: " + "; ".join(f.reasons)


def _table(title: str, rows: dict[str, Counter]) -> list[str]:
    width = max([len(title)] + [len(k) for k in rows]) + 2
    head = f"  {title:<{width}}" + "".join(f"{SHORT[k]:>8}" for k in KINDS) + f"{'total':>8}"
    out = [head]
    for name, c in rows.items():
        out.append(f"  {name:<{width}}" + "".join(f"{c.get(k, 0) or '.':>8}" for k in KINDS) + f"{sum(c.values()):>8}")
    return out


def render_text(s: Status) -> str:
    kinds = s.kinds
    total = len(s.overload_kind)
    lines = [
        f"mps-migrate status: {s.root}",
        f"{total} overloads in {s.family_count} families",
        "",
        "Overload routes by kind",
    ]
    top = max(kinds.values(), default=1)
    for k, label in KINDS.items():
        n = kinds.get(k, 0)
        lines.append(f"  {label:<28}{n:>6}  {'#' * round(40 * n / top) if n else ''}")
    lines += [
        "",
        "By category",
        *_table("category", s.by("category")),
        "",
        "By host file",
        *_table("host file", {h.rsplit("/", 1)[-1]: c for h, c in s.by("host").items()}),
        "",
    ]
    half = sum(f.half_migrated for f in s.families)
    lines.append(f"MPSGraph-backed families: {len(s.families)} ({half} half-migrated, listed first)")
    if s.port_note:
        lines.append(f"  port: unknown for all ({s.port_note})")
    for f in s.families:
        mark = "HALF " if f.half_migrated else "     "
        hosts = ", ".join(h.rsplit("/", 1)[-1] for h in f.hosts) or "-"
        port = "" if s.port_note else f"  port: {port_cell(f)}"
        lines.append(
            f"  {mark}{f.name:<32} {len(f.graph_overloads):>3} on MPSGraph, {len(f.metal_overloads):>3} Metal  [{hosts}]{port}"
        )
    return "\n".join(clip(x) for x in lines) + "\n"


def render_progress_text(p: Progress) -> str:
    lines = [f"mps-migrate status: {p.before.root} -> {p.after.root}", "", "Overload routes by kind (before -> after)"]
    for k, (a, b) in p.kind_delta().items():
        lines.append(f"  {KINDS[k]:<28}{a:>6} -> {b:<6} ({b - a:+d})")
    lists = [
        f"Migrated families ({len(p.migrated)}): " + (", ".join(p.migrated) or "-"),
        f"Advanced (fewer MPSGraph overloads) ({len(p.advanced)}): " + (", ".join(p.advanced) or "-"),
        f"Regressed ({len(p.regressed)}): " + (", ".join(f"{f} [{', '.join(o)}]" for f, o in p.regressed) or "-"),
    ]
    routed = [(f, st) for f, st in p.new if st != "other"]
    lists.append(
        f"New families ({len(p.new)}, {len(routed)} with an MPS kernel): "
        + (", ".join(f"{f} ({st})" for f, st in routed) or "-")
    )
    lists.append(f"Removed families ({len(p.removed)}): " + (", ".join(p.removed) or "-"))
    lines.append("")
    for x in lists:
        lines += _wrap(x)
    return "\n".join(clip(x) for x in lines) + "\n"

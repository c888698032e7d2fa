"""Markdown status, to paste into a tracking issue (GitHub-flavoured: tables, task lists)."""
from __future__ import annotations

from collections import Counter

from migrate.status.compare import Progress
from migrate.status.counting import KINDS, Status, short_host
from migrate.status.text import port_cell


def _esc(s: str) -> str:
    return s.replace("|", "\\|").replace("_", "\\_").replace("*", "\\*")


def _table(title: str, rows: dict[str, Counter]) -> list[str]:
    out = [f"| {title} | " + " | ".join(KINDS.values()) + " | total |",
           "|---|" + "---:|" * (len(KINDS) + 1)]
    for name, c in rows.items():
        out.append(f"| {_esc(name)} | " + " | ".join(str(c.get(k, 0)) for k in KINDS) + f" | {sum(c.values())} |")
    return out


def render_markdown(s: Status) -> str:
    kinds = s.kinds
    total = len(s.overload_kind)
    out = ["## MPS migration status", "", f"`{s.root}`: {total} overloads in {s.family_count} families.", "",
           "| route kind | overloads | share |", "|---|---:|---:|"]
    for k, label in KINDS.items():
        n = kinds.get(k, 0)
        out.append(f"| {label} | {n} | {100 * n / total if total else 0:.1f}% |")
    out += ["", "### By category", "", *_table("category", s.by("category")), "",
            "<details><summary>By host file</summary>", "", *_table("host file (under mps/)", {short_host(h): c for h, c in s.by("host").items()}), "", "</details>", ""]
    half = sum(f.half_migrated for f in s.families)
    out += [f"### MPSGraph-backed families ({len(s.families)}, {half} half-migrated first)", ""]
    if s.port_note:
        out += [f"Automatic port: unknown ({s.port_note}).", ""]
    for f in s.families:
        tag = " — **half-migrated** (MPS001)" if f.half_migrated else ""
        overloads = ", ".join(f"`{o}`" for o in f.graph_overloads)
        hosts = ", ".join(f"`{h.rsplit('/', 1)[-1]}`" for h in f.hosts)
        port = "" if s.port_note else f"; port: {port_cell(f)}"
        out.append(f"- [ ] **{_esc(f.name)}**{tag}: {overloads}" + (f" in {hosts}" if hosts else "") + port)
    return "\n".join(out) + "\n"


def render_progress_markdown(p: Progress) -> str:
    out = ["## MPS migration progress", "", f"`{p.before.root}` → `{p.after.root}`", "",
           "| route kind | before | after | change |", "|---|---:|---:|---:|"]
    for k, (a, b) in p.kind_delta().items():
        out.append(f"| {KINDS[k]} | {a} | {b} | {b - a:+d} |")

    def names(xs):
        return ", ".join(f"`{x}`" for x in xs) or "—"

    routed = [(f, st) for f, st in p.new if st != "other"]
    out += ["", f"- **Migrated** ({len(p.migrated)}): {names(p.migrated)}",
            f"- **Advanced** (fewer MPSGraph overloads) ({len(p.advanced)}): {names(p.advanced)}",
            f"- **Regressed** ({len(p.regressed)}): "
            + (", ".join(f"`{f}` ({names(o)})" for f, o in p.regressed) or "—"),
            f"- **New** ({len(p.new)}, {len(routed)} with an MPS kernel): "
            + (", ".join(f"`{f}` ({st})" for f, st in routed) or "—"),
            f"- **Removed** ({len(p.removed)}): {names(p.removed)}"]
    return "\n".join(out) + "\n"

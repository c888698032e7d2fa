"""Markdown status, to paste into a tracking issue (GitHub-flavoured: tables, task lists).

It fits in one GitHub comment (LIMIT characters): families port cannot move yet are collapsed
into <details>, each reason is clipped, and if that is still too long the last families give way
to a line pointing at the full list. The tree shows as its folder name: no local path.
"""

from __future__ import annotations

from collections import Counter
from pathlib import PurePath

from migrate.status.compare import Progress
from migrate.status.counting import KINDS, FamilyStatus, Status, short_host
from migrate.status.text import clip, port_cell

LIMIT = 65536  # characters of a GitHub issue comment
REASON = 160  # characters of a family's port cell
OVERLOADS = 6  # overloads named per family


def _esc(s: str) -> str:
    return s.replace("|", "\\|").replace("_", "\\_").replace("*", "\\*")


def _table(title: str, rows: dict[str, Counter]) -> list[str]:
    out = [f"| {title} | " + " | ".join(KINDS.values()) + " | total |", "|---|" + "---:|" * (len(KINDS) + 1)]
    for name, c in rows.items():
        out.append(f"| {_esc(name)} | " + " | ".join(str(c.get(k, 0)) for k in KINDS) + f" | {sum(c.values())} |")
    return out


def tree_name(root: str) -> str:
    return PurePath(root).name or root


def _family_line(s: Status, f: FamilyStatus) -> str:
    tag = " — **half-migrated** (MPS001)" if f.half_migrated else ""
    shown = f.graph_overloads[:OVERLOADS]
    more = len(f.graph_overloads) - len(shown)
    overloads = ", ".join(f"`{o}`" for o in shown) + (f" and {more} more" if more else "")
    hosts = ", ".join(f"`{h.rsplit('/', 1)[-1]}`" for h in f.hosts)
    port = "" if s.port_note else f"; port: {clip(port_cell(f), REASON)}"
    return f"- [ ] **{_esc(f.name)}**{tag}: {overloads}" + (f" in {hosts}" if hosts else "") + port


def render_markdown(s: Status, limit: int = LIMIT) -> str:
    kinds = s.kinds
    total = len(s.overload_kind)
    out = [
        "## MPS migration status",
        "",
        f"`{tree_name(s.root)}`: {total} overloads in {s.family_count} families.",
        "",
        "| route kind | overloads | share |",
        "|---|---:|---:|",
    ]
    for k, label in KINDS.items():
        n = kinds.get(k, 0)
        out.append(f"| {label} | {n} | {100 * n / total if total else 0:.1f}% |")
    out += [
        "",
        "### By category",
        "",
        *_table("category", s.by("category")),
        "",
        "<details><summary>By host file</summary>",
        "",
        *_table("host file (under mps/)", {short_host(h): c for h, c in s.by("host").items()}),
        "",
        "</details>",
        "",
    ]
    half = sum(f.half_migrated for f in s.families)
    out += [f"### MPSGraph-backed families ({len(s.families)}, {half} half-migrated first)", ""]
    if s.port_note:
        out += [f"Automatic port: unknown ({s.port_note}).", ""]
    open_ = [f for f in s.families if f.half_migrated or f.portable is not False]
    blocked = [f for f in s.families if f not in open_]
    lines = [_family_line(s, f) for f in open_]
    closing = []
    if blocked:
        lines += [""] * bool(lines) + [f"<details><summary>{len(blocked)} families port cannot move yet</summary>", ""]
        lines += [_family_line(s, f) for f in blocked]
        closing = ["", "</details>"]
    head = "\n".join(out) + "\n"
    body = _fit(lines, limit - len(head) - sum(len(c) + 1 for c in closing), len(s.families))
    if not any(x.startswith("<details>") for x in body):
        closing = []
    return _scrub(head + "\n".join(body + closing) + "\n", s.root)


def _fit(lines: list[str], room: int, families: int) -> list[str]:
    """``lines`` if they fit in ``room`` characters, else the first ones and a line saying what is left out."""
    if sum(len(x) + 1 for x in lines) <= room:
        return lines
    note = "- … and {} more families: `mps-migrate status --format json` (or `--format html`) lists every one"
    room -= len(note) + 8
    kept, used = [], 0
    for x in lines:
        if used + len(x) + 1 > room:
            break
        kept.append(x)
        used += len(x) + 1
    shown = sum(x.startswith("- [ ] ") for x in kept)
    return kept + [note.format(families - shown)]


def _scrub(text: str, root: str) -> str:
    """No local path: the tree's absolute path (in a port reason, say) becomes its folder name."""
    return text.replace(root.rstrip("/") + "/", "").replace(root, tree_name(root)) if root else text


def render_progress_markdown(p: Progress) -> str:
    out = [
        "## MPS migration progress",
        "",
        f"`{tree_name(p.before.root)}` → `{tree_name(p.after.root)}`",
        "",
        "| route kind | before | after | change |",
        "|---|---:|---:|---:|",
    ]
    for k, (a, b) in p.kind_delta().items():
        out.append(f"| {KINDS[k]} | {a} | {b} | {b - a:+d} |")

    def names(xs):
        return ", ".join(f"`{x}`" for x in xs) or "—"

    routed = [(f, st) for f, st in p.new if st != "other"]
    out += [
        "",
        f"- **Migrated** ({len(p.migrated)}): {names(p.migrated)}",
        f"- **Advanced** (fewer MPSGraph overloads) ({len(p.advanced)}): {names(p.advanced)}",
        f"- **Regressed** ({len(p.regressed)}): " + (", ".join(f"`{f}` ({names(o)})" for f, o in p.regressed) or "—"),
        f"- **New** ({len(p.new)}, {len(routed)} with an MPS kernel): "
        + (", ".join(f"`{f}` ({st})" for f, st in routed) or "—"),
        f"- **Removed** ({len(p.removed)}): {names(p.removed)}",
    ]
    text = "\n".join(out) + "\n"
    return _scrub(_scrub(text, p.before.root), p.after.root)

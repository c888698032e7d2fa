"""A port's edits as text: applying them (``apply_edits``), where a line or a struct ends, and the cleanup of
the old implementation by lint's own fix loop on the port's overlay (with the helpers and types it leaves
unused)."""

from __future__ import annotations

import re

from migrate.fixes import FixBuilder
from migrate.index import Index
from migrate.model import Edit
from migrate.source import SourceFile
from migrate.source.literal_search import closing_brace


line_end = FixBuilder.line_end


def struct_end(data: bytes, start: int) -> int:
    code = SourceFile(data).code
    close = closing_brace(code, code.find(b"{", start))
    return len(data) if close is None else line_end(data, close)


def apply_edits(sources: dict[str, bytes], edits: list[Edit]) -> dict[str, bytes]:
    """New file contents; insertions at one offset keep their order; overlaps are an error."""
    by_path: dict[str, list[tuple[int, Edit]]] = {}
    for seq, e in enumerate(edits):
        by_path.setdefault(e.path, []).append((seq, e))
    out = {}
    for path, items in by_path.items():
        items.sort(key=lambda x: (x[1].start, x[1].end, x[0]))
        for (_, a), (_, b) in zip(items, items[1:]):
            if b.start < a.end:
                raise ValueError(f"overlapping edits in {path} at bytes {a.start}-{a.end} and {b.start}-{b.end}")
        data = sources.get(path, b"")  # a path the tree lacks: a file the edits create
        for _, e in reversed(items):
            data = data[: e.start] + e.replacement.encode() + data[e.end :]
        out[path] = data
    return out


CLEANUP_CODES = ("MPS004", "MPS005", "MPS009")  # dead implementation, stale include, stale expected failure


def cleanup_by_fix_loop(ix: Index, family: str, edits: list[Edit], kernels: frozenset[str] = frozenset()) -> list[Edit]:
    """The family's cleanup is lint's own: the fix loop runs on the port's overlay (the tree with the
    port applied in memory) and applies the family's MPS004/005/009 fixes to a fixed point -- one
    edit applier, no second copy of those rules.  Kernel-file insertions stay as they are (a batch
    combines them); a file the cleanup changed becomes one whole-file edit.  ``kernels``: the family's old
    MPS functions, whatever family their names suggest (_prelu_kernel's is prelu_mps)."""
    from migrate.fixloop import family_of
    from migrate.config import Config
    from migrate.fixloop import fix_to_fixed_point
    from migrate.tree import load_tree

    overlay = apply_edits(ix.tree.sources, edits)
    tree = load_tree(ix.tree.root, {**ix.tree.sources, **overlay})  # ix's tree may itself be an overlay
    outcome = fix_to_fixed_point(
        ix.tree.root,
        Config(select=list(CLEANUP_CODES)),
        unsafe=True,
        tree=tree,
        keep=lambda f, index: f.code in CLEANUP_CODES and (family_of(f, index) == family or f.kernel in kernels),
    )
    if not outcome.new:
        return edits
    final = {**overlay, **outcome.new}
    helpers = _helpers_of(ix, kernels)
    final.update(_without_dead_helpers(ix.tree.root, {**ix.tree.sources, **final}, set(outcome.new), helpers))
    for p in outcome.new:
        final[p] = _without_dead_types(ix.tree.sources[p], final[p])
    keep = [e for e in edits if e.path not in outcome.new]
    whole = [
        Edit(p, 0, len(ix.tree.sources[p]), final[p].decode("utf-8", "surrogateescape")) for p in sorted(outcome.new)
    ]
    return keep + whole


def _helpers_of(ix: Index, kernels: frozenset[str]) -> set[str]:
    """Static functions the family's old MPS functions call, directly or through each other."""
    out: set[str] = set()
    todo = [f for k in kernels for f in ix.functions.get(k, ())]
    while todo:
        f = todo.pop()
        for name in f.calls:
            for g in ix.functions.get(name, ()):
                if g.is_static and g.path == f.path and name not in out:
                    out.add(name)
                    todo.append(g)
    return out


def _without_dead_helpers(root, sources: dict[str, bytes], paths: set[str], helpers: set[str]) -> dict[str, bytes]:
    """The files of ``paths`` without the ``helpers`` nothing in them calls any more (a static function is
    file-local): the shared graph helpers of the last overloads a port removed.  Repeated, for helpers of
    helpers."""
    from migrate.tree import load_tree

    changed: dict[str, bytes] = {}
    while helpers:
        ix = Index(load_tree(root, {**sources, **changed}))
        dead = []
        for p in sorted(paths & set(ix.tree.hosts)):
            data = ix.tree.sources[p]
            for f in ix.tree.hosts[p].functions:
                if f.name in helpers and f.is_static and len(ix.functions.get(f.name, ())) == 1:
                    uses = len(re.findall(rb"\b" + re.escape(f.name.encode()) + rb"\b", data))
                    own = len(re.findall(rb"\b" + re.escape(f.name.encode()) + rb"\b", data[f.span.start : f.span.end]))
                    if uses == own:
                        dead.append(f)
        fixes = [fx for f in dead if (fx := ix.fixes.remove_function(f)) is not None]
        if not fixes:
            break
        edits = [e for fx in fixes for e in fx.edits]
        changed.update(apply_edits({**sources, **changed}, edits))
        helpers = helpers - {f.name for f in dead}
    return changed


_TYPE_AT_LINE_START = re.compile(rb"^(?:struct|class)\s+(\w+)\b[^;{]*\{", re.M)


_EMPTY_NAMESPACE = re.compile(rb"^namespace\s+(\w+)\s*\{\s*\}[ \t]*(?://[^\n]*)?\n", re.M)


def _without_dead_types(old: bytes, new: bytes) -> bytes:
    """``new`` without what the port's deletions left unused: a file-scope type (the cached-graph struct of
    the removed graph code) used before and named nowhere outside its own definition now, then a namespace
    left empty."""
    changed = True
    while changed:
        changed = False
        code = SourceFile(new).code  # comments and strings blanked: a `struct` there is no type
        for m in _TYPE_AT_LINE_START.finditer(code):
            end = closing_brace(code, m.end() - 1)
            if end is None or new[end : end + 2] != b"};":
                continue
            name = re.compile(rb"\b" + re.escape(m.group(1)) + rb"\b")
            outside = len(name.findall(new)) - len(name.findall(new[m.start() : end]))
            if outside == 0 and len(name.findall(old)) > len(name.findall(new[m.start() : end])):
                stop = new.find(b"\n", end) + 1 or len(new)
                if new[stop : stop + 1] == b"\n" and (m.start() < 2 or new[m.start() - 2 : m.start()] == b"\n\n"):
                    stop += 1
                new, changed = new[: m.start()] + new[stop:], True
                break
    if not _EMPTY_NAMESPACE.search(old):
        new = _EMPTY_NAMESPACE.sub(b"", new)
    return new

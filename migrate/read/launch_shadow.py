"""Launch sizes shadowed in an inner scope (MPS023's host sites).

An inner block declares a variable again (``size_t tg = ...`` inside an ``if``) while a later
dispatch, after the block, reads the outer variable: the value computed inside never reaches the
launch.  A dispatch is a call or send named in launch_conventions.yaml's ``hand_written.dispatch``;
what it reads is the names of its arguments and, through declarations and assignments before it,
the names those were computed from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import tree_sitter

from migrate.tables import load_table

from .cpp_unit import Unit

_SCOPES = frozenset({"compound_statement", "for_statement", "for_range_loop", "if_statement", "while_statement"})


@lru_cache(maxsize=1)
def dispatch_words() -> tuple[bytes, ...]:
    return tuple(w.encode() for w in load_table("launch_conventions.yaml")["hand_written"]["dispatch"])


@dataclass
class _Decl:
    name: bytes
    node: tree_sitter.Node  # the declarator's identifier
    scope: tree_sitter.Node
    value: tree_sitter.Node | None


def find(unit: Unit) -> list[tuple[str, int, int, str | None, str]]:
    """Sites ``("shadowed_launch", start, end, function, "name:outer line:dispatch line")``."""
    code = unit.sc.code
    words = dispatch_words()
    found = []
    for fn in unit.functions:
        if not any(code.find(w, fn.body_start, fn.body_end) >= 0 for w in words):
            continue
        decls, sets, dispatches = _walk(fn.node, set(words))
        for inner in decls:
            outer = _shadowed(inner, decls)
            if outer is None:
                continue
            block = inner.scope
            if any(
                _reads(d, inner.name, sets) for d in dispatches if inner.node.end_byte <= d.start_byte < block.end_byte
            ):
                continue  # the inner value is launched in its own block
            later = [d for d in dispatches if block.end_byte <= d.start_byte < outer.scope.end_byte]
            hit = next((d for d in later if _reads(d, inner.name, sets)), None)
            if hit is None:
                continue
            line = unit.sc.line_of
            detail = f"{inner.name.decode()}:{line(outer.node.start_byte)}:{line(hit.start_byte)}"
            s, e = inner.node.start_byte, inner.node.end_byte
            found.append(("shadowed_launch", s, e, fn.name, detail))
    return found


def _walk(root: tree_sitter.Node, words: set[bytes]):
    """Declarations (with their scopes), value flows ``(target, names, at)``, dispatch statements."""
    decls: list[_Decl] = []
    sets: list[tuple[bytes, set[bytes], int]] = []
    dispatches: list[tree_sitter.Node] = []
    body = root.child_by_field_name("body")
    stack = [(body, body)] if body is not None else []
    while stack:
        node, scope = stack.pop()
        t = node.type
        if t == "declaration":
            for d in node.children_by_field_name("declarator"):
                ident, value = _declared(d)
                if ident is not None:
                    decls.append(_Decl(ident.text, ident, scope, value))
                    if value is not None:
                        sets.append((ident.text, _names(value), node.start_byte))
        elif t == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and left.type == "identifier" and right is not None:
                sets.append((left.text, _names(right), node.start_byte))
        elif t == "expression_statement" and words & _names(node):
            dispatches.append(node)
        inner = node if t in _SCOPES and node is not scope else scope
        stack.extend((c, inner) for c in node.named_children)
    return decls, sets, dispatches


def _declared(d: tree_sitter.Node) -> tuple[tree_sitter.Node | None, tree_sitter.Node | None]:
    if d.type == "identifier":
        return d, None
    if d.type == "init_declarator":
        ident = d.child_by_field_name("declarator")
        if ident is not None and ident.type == "identifier":
            return ident, d.child_by_field_name("value")
    return None, None


def _shadowed(inner: _Decl, decls: list[_Decl]) -> _Decl | None:
    """The nearest declaration of the same name in a scope strictly around ``inner``'s, made before it."""
    best = None
    for d in decls:
        if d.name != inner.name or d is inner or d.node.start_byte >= inner.node.start_byte:
            continue
        s = d.scope
        if s.start_byte <= inner.scope.start_byte and inner.scope.end_byte <= s.end_byte and s != inner.scope:
            if best is None or best.scope.start_byte <= s.start_byte:
                best = d
    return best


def _reads(dispatch: tree_sitter.Node, name: bytes, sets) -> bool:
    """Does the dispatch read ``name``, directly or through values computed before it?"""
    seen = _names(dispatch)
    grew = True
    while grew and name not in seen:
        grew = False
        for target, names, at in sets:
            if at < dispatch.start_byte and target in seen and not names <= seen:
                seen |= names
                grew = True
    return name in seen


def _names(node: tree_sitter.Node) -> set[bytes]:
    out: set[bytes] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            out.add(n.text)
        stack.extend(n.named_children)
    return out

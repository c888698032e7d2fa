"""Code sites for the host-side rules (MPS011-MPS014, MPS018's compile options, MPS023), see domain.md section 4.

Candidates come from regexes over the scrubbed code (comments and literals
blanked); tree-sitter nodes around each candidate decide.  Each site is
(kind, start, end, function, detail) with byte offsets into the unit.
"""

from __future__ import annotations

import bisect
import os
import re
from functools import lru_cache

import tree_sitter

from . import launch_shadow
from .cpp_unit import FnNode, Unit
from migrate.source.literal_search import matches_at

RawSite = tuple[str, int, int, "str | None", str]

_READBACK = re.compile(rb"(?:\.|->)[ \t]*(item|cpu)[ \t]*(<[^;(){}]*>)?[ \t]*\([ \t]*\)")
_TO_CPU = re.compile(rb"(?:\.|->)[ \t]*to[ \t]*\([ \t]*(?:(?:at|c10|torch)::)?(?:kCPU|DeviceType::CPU)\b[ \t]*\)")
_SUBITER_LOOP = re.compile(rb"\bwith_32bit_indexing[ \t]*\(")
_NUMEL = re.compile(rb"numel[ \t]*\([ \t]*\)")  # the node lookup rejects longer names
_SETBYTES = re.compile(rb"\bmtl_setBytes\b")
# a library compile option that turns fast math on unconditionally (MPS018)
_FAST_MATH = re.compile(
    rb"setFastMathEnabled\s*:\s*(?:YES|true)\b|\bfastMathEnabled\s*=\s*(?:YES|true)\b"
    rb"|\bmathMode\s*=\s*MTLMathModeFast\b"
)
_FAST_MATH_WORDS = (b"setFastMathEnabled", b"fastMathEnabled", b"mathMode")  # where its matches start
# member accesses that read the WHOLE tensor's geometry/data (wrong on a sub-iterator)
_WHOLE_MEMBERS = frozenset(
    {
        "numel",
        "data_ptr",
        "mutable_data_ptr",
        "const_data_ptr",
        "sizes",
        "strides",
        "size",
        "stride",
        "storage_offset",
        "is_contiguous",
        "view",
        "copy_",
        "fill_",
        "zero_",
    }
)
_NARROW_TYPES = frozenset(
    {
        "int",
        "int32_t",
        "uint32_t",
        "unsigned",
        "unsigned int",
        "uint",
        "int16_t",
        "uint16_t",
        "short",
        "unsigned short",
        "int8_t",
        "uint8_t",
        "char",
        "unsigned char",
        "ushort",
        "uchar",
    }
)
_ARITH = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"})


_NARROW_WORD = re.compile(
    rb"\b(?:" + b"|".join(sorted({w.encode() for t in _NARROW_TYPES for w in t.split()})) + rb")\b"
)
_NODE_WORDS = (b"with_32bit_indexing", b"mtl_setBytes")
_NODE_WORDS_SUBITER = _NODE_WORDS + (b"tensor",)  # callees handed the sub-iterator


def within(code: bytes, words, tail: re.Pattern[bytes] | None = None):
    """``(start, end) -> bool``: is one of ``words`` (each followed by what ``tail`` matches there)
    between these offsets?  Found with ``bytes.find`` over the whole code once per group of words
    with a common prefix: exact for spans that end at a body's closing brace, which no such match
    holds.  The function is false (``bool``) when there is none in the whole code."""
    hits = []
    for anchor, group in _anchors(tuple(words)):
        i = code.find(anchor)
        while i >= 0:
            for w in group:
                if code.startswith(w, i):
                    e = i + len(w)
                    m = tail.match(code, e) if tail is not None else None
                    if tail is None or m is not None:
                        hits.append((i, m.end() if m is not None else e))
            i = code.find(anchor, i + 1)
    hits.sort()
    return _Hits(hits)


class _Hits:
    def __init__(self, hits: list[tuple[int, int]]) -> None:
        self.hits = hits
        self.starts = [h[0] for h in hits]

    def __call__(self, start: int, end: int) -> bool:
        k = bisect.bisect_left(self.starts, start)
        return k < len(self.starts) and self.hits[k][1] <= end

    def __bool__(self) -> bool:
        return bool(self.hits)


@lru_cache(maxsize=8)
def _anchors(words: tuple[bytes, ...]) -> list[tuple[bytes, tuple[bytes, ...]]]:
    """``words`` grouped by their first bytes, each group with its common prefix: one search each."""
    groups: dict[bytes, list[bytes]] = {}
    for w in words:
        groups.setdefault(w[:5], []).append(w)
    return [(os.path.commonprefix(g), tuple(g)) for g in groups.values()]


def needs_nodes(code: bytes):
    """``(start, end) -> bool``: may find_sites read nodes between these offsets of ``code``?"""
    words = (_NODE_WORDS_SUBITER if b"with_32bit_indexing" in code else _NODE_WORDS) + launch_shadow.dispatch_words()
    inside = within(code, words)
    if b"numel" not in code:  # no narrowing to look for: the node words alone decide
        return inside

    def needed(start: int, end: int) -> bool:
        if inside(start, end):
            return True
        i = code.find(b"numel", start, end)
        while i >= 0:  # a narrowing names its type before numel in the same statement
            stmt = max(code.rfind(b";", start, i), code.rfind(b"}", start, i), start)
            if _NARROW_WORD.search(code, stmt, i) is not None:
                return True
            i = code.find(b"numel", i + 5, end)
        return False

    return needed


def find_sites(unit: Unit) -> list[RawSite]:
    code = unit.sc.code
    sites: list[RawSite] = []
    if b"item" in code or b"cpu" in code or b"CPU" in code:
        sites += _readbacks(unit)
    if b"numel" in code:
        sites += _narrowings(unit)
    if b"with_32bit_indexing" in code:
        sites += _subiter_tensors(unit)
    if b"mtl_setBytes" in code:
        sites += _setbytes_chains(unit)
    if any(w in code for w in launch_shadow.dispatch_words()):
        sites += launch_shadow.find(unit)
    if b"astMath" in code or b"MTLMathModeFast" in code:  # setFastMath..., fastMathEnabled
        sites += [
            ("fast_math", m.start(), m.end(), _fn_name(unit, m.start()), _text(unit, m.start(), m.end()))
            for m in matches_at(_FAST_MATH, code, _FAST_MATH_WORDS)
        ]
    sites.sort(key=lambda s: (s[1], s[0]))
    return sites


def _fn_name(unit: Unit, offset: int) -> str | None:
    fn = unit.enclosing(offset)
    return fn.name if fn else None


def _text(unit: Unit, start: int, end: int) -> str:
    return unit.sc.data[start:end].decode("utf-8", "replace")


def _code_only(unit: Unit, offset: int) -> bool:
    return not unit.sc.in_directive(offset)


# ------------------------------------------------------------- readback
def _readbacks(unit: Unit) -> list[RawSite]:
    found: list[RawSite] = []
    code = unit.sc.code
    for m in _readback_matches(code) + (list(_TO_CPU.finditer(code)) if b"CPU" in code else []):
        if not _code_only(unit, m.start()):
            continue
        detail = re.sub(r"\s+", "", _text(unit, m.start(), m.end()))
        if detail.startswith("->"):
            detail = "." + detail[2:]
        found.append(("readback", m.start(), m.end(), _fn_name(unit, m.start()), detail))
    return found


def _readback_matches(code: bytes) -> list[re.Match[bytes]]:
    """``_READBACK.finditer(code)``, tried only where a ``.`` or ``->`` stands before an ``item`` or ``cpu``
    (found by bytes.find: the regex's own scan steps through every ``.`` of the file)."""
    starts = set()
    for w in (b"item", b"cpu"):
        i = code.find(w)
        while i >= 0:
            j = i
            while j and code[j - 1] in (32, 9):
                j -= 1
            if j and code[j - 1] == 46:  # "."
                starts.add(j - 1)
            elif j > 1 and code[j - 2 : j] == b"->":
                starts.add(j - 2)
            i = code.find(w, i + 1)
    out: list[re.Match[bytes]] = []
    end = 0
    for s in sorted(starts):  # leftmost first, no overlaps: what finditer returns
        m = _READBACK.match(code, s) if s >= end else None
        if m is not None:
            out.append(m)
            end = m.end()
    return out


# ------------------------------------------------------- narrowing numel
def _narrowings(unit: Unit) -> list[RawSite]:
    found: list[RawSite] = []
    seen: set[int] = set()
    for m in matches_at(_NUMEL, unit.sc.code, (b"numel",)):
        if not _code_only(unit, m.start()):
            continue
        node = unit.root.named_descendant_for_byte_range(m.start(), m.start() + 5)
        call = _numel_call(node)
        if call is None:
            continue
        hit = _narrowing_context(call)
        if hit is None or hit.start_byte in seen:
            continue
        seen.add(hit.start_byte)
        text = re.sub(r"\s+", " ", _text(unit, hit.start_byte, hit.end_byte)).strip()
        found.append(("narrow_numel", hit.start_byte, hit.end_byte, _fn_name(unit, hit.start_byte), text))
    return found


def _numel_call(node: tree_sitter.Node | None) -> tree_sitter.Node | None:
    if node is None or node.type != "field_identifier" or node.text != b"numel":
        return None
    field = node.parent
    if field is None or field.type != "field_expression":
        return None
    call = field.parent
    if call is None or call.type != "call_expression" or call.child_by_field_name("function") != field:
        return None
    return call


def _type_text(node: tree_sitter.Node | None) -> str:
    if node is None:
        return ""
    return " ".join(node.text.decode("latin-1").replace("std::", "").split())


def _narrowing_context(expr: tree_sitter.Node) -> tree_sitter.Node | None:
    """The cast/declaration narrowing the value of ``expr`` to <= 32 bits, if any."""
    node = expr
    while True:
        parent = node.parent
        if parent is None:
            return None
        t = parent.type
        if t == "parenthesized_expression":
            node = parent
            continue
        if t == "binary_expression":
            op = parent.child_by_field_name("operator")
            if op is not None and op.type in _ARITH:
                node = parent
                continue
            return None
        break
    if t == "cast_expression":
        return parent if _type_text(parent.child_by_field_name("type")) in _NARROW_TYPES else None
    if t == "argument_list":
        call = parent.parent
        if call is None or call.type != "call_expression" or len(parent.named_children) != 1:
            return None
        fn = call.child_by_field_name("function")
        if fn is not None and fn.type == "template_function":
            name = fn.child_by_field_name("name")
            targs = fn.child_by_field_name("arguments")
            if name is not None and name.text == b"static_cast" and targs is not None:
                inner = targs.named_children[0] if targs.named_children else None
                return call if _type_text(inner) in _NARROW_TYPES else None
            return None
        if fn is not None and fn.type in ("primitive_type", "type_identifier", "sized_type_specifier"):
            return call if _type_text(fn) in _NARROW_TYPES else None  # uint32_t(x.numel())
        return None
    if t == "initializer_list":
        parent = parent.parent  # uint32_t n{x.numel()}
        t = parent.type if parent is not None else ""
    if t == "init_declarator":
        decl = parent.parent
        if decl is None or decl.type != "declaration":
            return None
        if parent.child_by_field_name("declarator").type != "identifier":
            return None  # pointer / reference / array
        if _type_text(decl.child_by_field_name("type")) in _NARROW_TYPES:
            return decl
    return None


# ------------------------------------------------------ sub-iterator misuse
def _subiter_tensors(unit: Unit) -> list[RawSite]:
    found: list[RawSite] = []
    code = unit.sc.code
    by_name: dict[str, list[FnNode]] = {}
    for fn in unit.functions:
        by_name.setdefault(fn.name, []).append(fn)
    done: set[tuple[int, int]] = set()
    for m in _SUBITER_LOOP.finditer(code):
        loop = _enclosing_range_loop(unit, m.start())
        if loop is None:
            continue
        var, body = loop
        found += _tensor_uses(unit, var, body.start_byte, body.end_byte, done)
        # functions handed the sub-iterator: their parameter is a sub-iterator too
        for callee, index in _calls_with(unit, body, var):
            for fn in by_name.get(callee, ()):
                param = _param_name(fn, index)
                if param:
                    found += _tensor_uses(
                        unit, param, fn.body_start, fn.body_end, done, skip=_split_loop_bodies(unit, fn)
                    )
    return found


def _enclosing_range_loop(unit: Unit, offset: int) -> tuple[str, tree_sitter.Node] | None:
    node = unit.root.named_descendant_for_byte_range(offset, offset + 1)
    while node is not None and node.type != "for_range_loop":
        if node.type in ("function_definition", "compound_statement"):
            return None
        node = node.parent
    if node is None:
        return None
    right = node.child_by_field_name("right")
    body = node.child_by_field_name("body")
    if right is None or body is None or not (right.start_byte <= offset < right.end_byte):
        return None
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type != "identifier":
        decl = decl.child_by_field_name("declarator") or (decl.named_children[-1] if decl.named_children else None)
    if decl is None:
        return None
    return decl.text.decode("latin-1"), body


def _split_loop_bodies(unit: Unit, fn: FnNode) -> list[tuple[int, int]]:
    """Bodies of with_32bit_indexing() loops inside fn (already handled)."""
    spans = []
    for m in _SUBITER_LOOP.finditer(unit.sc.code, fn.body_start, fn.body_end):
        loop = _enclosing_range_loop(unit, m.start())
        if loop:
            spans.append((loop[1].start_byte, loop[1].end_byte))
    return spans


def _calls_with(unit: Unit, body: tree_sitter.Node, var: str) -> list[tuple[str, int]]:
    """(callee, argument index) for calls in body passing ``var`` as a whole argument."""
    out = []
    pat = re.compile(rb"\b([A-Za-z_]\w*)[ \t]*(?:<[^;{}()]*>)?[ \t]*\(")
    code = unit.sc.code
    for m in pat.finditer(code, body.start_byte, body.end_byte):
        node = unit.root.named_descendant_for_byte_range(m.start(1), m.end(1))
        while node is not None and node.type != "call_expression":
            if node.type in ("argument_list", "compound_statement"):
                node = None
                break
            node = node.parent
        if node is None:
            continue
        args = node.child_by_field_name("arguments")
        if args is None:
            continue
        for i, a in enumerate(x for x in args.named_children if x.type != "comment"):
            if a.type == "identifier" and a.text.decode("latin-1") == var:
                out.append((m.group(1).decode("latin-1"), i))
    return out


def _param_name(fn: FnNode, index: int) -> str | None:
    decl = fn.node.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    params = decl.child_by_field_name("parameters") if decl is not None else None
    if params is None:
        return None
    plist = [p for p in params.named_children if p.type in ("parameter_declaration", "optional_parameter_declaration")]
    if index >= len(plist):
        return None
    d = plist[index].child_by_field_name("declarator")
    while d is not None and d.type != "identifier":
        d = d.child_by_field_name("declarator") or (d.named_children[-1] if d.named_children else None)
    return d.text.decode("latin-1") if d is not None else None


def _tensor_uses(
    unit: Unit, var: str, start: int, end: int, done: set[tuple[int, int]], skip: list[tuple[int, int]] = ()
) -> list[RawSite]:
    found: list[RawSite] = []
    code = unit.sc.code
    pat = re.compile(rb"\b" + re.escape(var.encode()) + rb"[ \t]*(?:\.|->)[ \t]*tensor[ \t]*\(")
    for m in pat.finditer(code, start, end):
        if any(s <= m.start() < e for s, e in skip):
            continue
        node = unit.root.named_descendant_for_byte_range(m.start(), m.start() + len(var))
        call = node
        while call is not None and call.type != "call_expression":
            call = call.parent
        if call is None or call.start_byte != m.start():
            continue
        hit = _whole_tensor_use(unit, call, end)
        if hit is None or (hit.start_byte, hit.end_byte) in done:
            continue
        done.add((hit.start_byte, hit.end_byte))
        text = re.sub(r"\s+", "", _text(unit, hit.start_byte, hit.end_byte))
        found.append(("subiter_tensor", hit.start_byte, hit.end_byte, _fn_name(unit, hit.start_byte), text))
    return found


def _whole_tensor_use(unit: Unit, call: tree_sitter.Node, scope_end: int) -> tree_sitter.Node | None:
    """``X.tensor(N)`` bound, passed, or asked for its numel/sizes/data: the node to report."""
    parent = call.parent
    if parent is None:
        return None
    if parent.type == "field_expression":
        member = parent.child_by_field_name("field")
        name = member.text.decode("latin-1") if member is not None else ""
        if name in _WHOLE_MEMBERS:
            outer = parent.parent
            return outer if outer is not None and outer.type == "call_expression" else parent
        return None  # dtype / device / options: the same on every sub-iterator
    if parent.type == "init_declarator":
        var = parent.child_by_field_name("declarator")
        while var is not None and var.type != "identifier":
            var = var.child_by_field_name("declarator") or (var.named_children[-1] if var.named_children else None)
        if var is not None and not _only_harmless_uses(unit, var.text, parent.end_byte, scope_end):
            return call
        return None
    if parent.type in (
        "argument_list",
        "assignment_expression",
        "return_statement",
        "initializer_list",
        "condition_clause",
    ):
        return call
    return None


def _only_harmless_uses(unit: Unit, name: bytes, start: int, end: int) -> bool:
    pat = re.compile(rb"\b" + re.escape(name) + rb"\b(?:[ \t]*(?:\.|->)[ \t]*([A-Za-z_]\w*))?")
    for m in pat.finditer(unit.sc.code, start, end):
        member = (m.group(1) or b"").decode("latin-1")
        if not member or member in _WHOLE_MEMBERS:
            return False
    return True


# ------------------------------------------------------- mtl_setBytes chains
def _setbytes_chains(unit: Unit) -> list[RawSite]:
    by_block: dict[int, tuple[tree_sitter.Node, set[int]]] = {}
    for m in matches_at(_SETBYTES, unit.sc.code, (b"mtl_setBytes",)):
        if not _code_only(unit, m.start()):
            continue
        node = unit.root.named_descendant_for_byte_range(m.start(), m.end())
        stmt = node
        while stmt is not None and stmt.type != "expression_statement":
            if stmt.type in ("compound_statement", "function_definition"):
                stmt = None
                break
            stmt = stmt.parent
        if stmt is None or stmt.parent is None:
            continue
        call = stmt.named_children[0] if stmt.named_children else None
        if call is None or call.type != "call_expression" or call.start_byte != m.start():
            continue
        block = stmt.parent
        by_block.setdefault(block.id, (block, set()))[1].add(stmt.start_byte)
    found: list[RawSite] = []
    for block, starts in by_block.values():
        run: list[tree_sitter.Node] = []
        for child in block.named_children + [None]:
            if child is not None and child.type == "comment":
                continue
            if child is not None and child.start_byte in starts:
                run.append(child)
                continue
            if len(run) >= 2:
                s, e = run[0].start_byte, run[-1].end_byte
                found.append(("setbytes_chain", s, e, _fn_name(unit, s), f"{len(run)} consecutive mtl_setBytes calls"))
            run = []
    return found

"""One parsed piece of host code: a whole file or one macro expansion.

Parsing goes through the Objective-C neutraliser (objc_neutral) and
tree-sitter-cpp.  Top-level structure comes from a short walk over
namespace/preprocessor containers (no per-node recursion over bodies);
identifiers and calls come from C-speed regexes over the scrubbed code.
"""

from __future__ import annotations

import bisect
import re
from itertools import accumulate
from dataclasses import dataclass

import tree_sitter
import tree_sitter_cpp

from migrate.source import SourceFile
from migrate.source.literal_search import offsets
from migrate.source.tokens import blank
from .objc_neutral import neutralize

LANGUAGE = tree_sitter.Language(tree_sitter_cpp.language())
_PARSER = tree_sitter.Parser(LANGUAGE)
_LEAN_PARSER = tree_sitter.Parser(LANGUAGE)

_CONTAINERS = frozenset(
    {
        "translation_unit",
        "declaration_list",
        "namespace_definition",
        "linkage_specification",
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        "template_declaration",
        "ERROR",
    }
)
_DECLARATOR_WRAPPERS = frozenset(
    {
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
    }
)
# One pass over latin-1 decoded scrubbed code (offsets unchanged): each match is
# (identifier, "(" if it is called); "@end" and numbers give ("", "").
TOKENS = re.compile(r"@\w+|\b(?:\d[\w.]*|([A-Za-z_]\w*)(?:(?=(?:<[\w:, *&]*>)?[ \t]*(\()))?)", re.ASCII)
# The same words, without the call test (a lookahead at every word is the slow part).
WORDS = re.compile(r"@\w+|\b(?:\d[\w.]*|([A-Za-z_]\w*))", re.ASCII)
# Calls, read backwards from each "(": over the reversed text, a word that starts (reads last) with a
# letter and has no word byte or "@" before it; the same names TOKENS marks as called.
CALLS_REVERSED = re.compile(r"\([ \t]*(?:>[\w:, *&]*<)?(\w*[A-Za-z_])(?![\w@])", re.ASCII)
_WORD_BYTE = re.compile(r"[\w@]", re.ASCII)
_WORD_CHAR = re.compile(r"\w", re.ASCII)
_WORD_CHARS = re.compile(r"\w*", re.ASCII)
KEYWORDS = frozenset(
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t "
    "char32_t class compl concept const consteval constexpr constinit const_cast continue co_await "
    "co_return co_yield decltype default delete do double dynamic_cast else enum explicit export "
    "extern false float for friend goto if inline int long mutable namespace new noexcept not "
    "not_eq nullptr operator or or_eq private protected public register reinterpret_cast requires "
    "return short signed sizeof static static_assert static_cast struct switch template this "
    "thread_local throw true try typedef typeid typename union unsigned using virtual void "
    "volatile wchar_t while override final define include ifdef ifndef endif elif undef pragma "
    "defined __bridge __bridge_transfer __bridge_retained __weak __strong __block __autoreleasing "
    "__unsafe_unretained _Nonnull _Nullable _Null_unspecified nonnull nullable".split()
)


@dataclass
class FnNode:
    name: str
    kind: str  # "function" | "impl_func"
    node: tree_sitter.Node  # function_definition
    start: int  # definition incl. a template<> header
    end: int
    name_start: int
    name_end: int
    body_start: int
    body_end: int
    is_static: bool


class Unit:
    """Parsed code plus its top-level functions, sorted by position.

    ``keep(start, end)``: when given, a function body it says no to is parsed blank (lean_bodies):
    its contents are never looked at as nodes, so the parser skips them.
    """

    def __init__(self, sc: SourceFile, blanks: list[tuple[int, int]] = (), keep=None) -> None:
        self.sc = sc
        lean, stops = lean_bodies(sc, keep) if keep is not None else ([], [])
        if keep is not None:
            lean += lean_heads(sc, keep, lean)
        out = neutralize(sc, lean)
        for p in stops:
            out[p] = 59  # ;
        for s, e in blanks:
            out[s:e] = blank(bytes(out[s:e]))
        self._parsed = bytes(out)
        if lean:  # the parser skips the blank regions (blank bytes still cost it as much as code)
            _LEAN_PARSER.included_ranges = _outside(sc, lean)
            self.tree = _LEAN_PARSER.parse(self._parsed)
        else:
            self.tree = _PARSER.parse(self._parsed)
        self.root = self.tree.root_node
        self.functions: list[FnNode] = []
        self.top_errors: list[tree_sitter.Node] = []
        self._walk()
        self.functions.sort(key=lambda f: f.start)
        self._starts = [f.start for f in self.functions]

    def _walk(self) -> None:
        stack = [self.root]
        while stack:
            node = stack.pop()
            for child in node.named_children:
                t = child.type
                if t == "function_definition":
                    fn = _function(child, self._parsed)
                    if fn is not None:
                        self.functions.append(fn)
                elif t in _CONTAINERS:
                    if t == "ERROR":
                        self.top_errors.append(child)
                    stack.append(child)
                elif t == "declaration" and child.has_error:
                    stack.append(child)  # a definition swallowed by a broken declaration

    def enclosing(self, offset: int) -> FnNode | None:
        i = bisect.bisect_right(self._starts, offset) - 1
        if i >= 0 and offset < self.functions[i].end:
            return self.functions[i]
        return None


_BRACES = re.compile(rb"[{}]")
_SPACE = re.compile(rb"[ \t]")


def lean_bodies(sc: SourceFile, keep) -> tuple[list[tuple[int, int]], list[int]]:
    """Insides of function bodies (``) {`` ... ``}``, outermost) that ``keep(start, end)`` refuses, whose
    conditional groups (``#if`` ... ``#endif``) are whole, each branch with balanced braces (so the body
    ends where it does whichever branch is taken), and raw string contents: what the parser need not see;
    and in each body the one offset left between them, where the parser is to see ``;``."""
    code = sc.code
    found = []
    stops: list[int] = []
    in_directives = {
        m.start()
        for ds, de in sc.directives
        if code.find(b"{", ds, de) >= 0 or code.find(b"}", ds, de) >= 0
        for m in _BRACES.finditer(code, ds, de)
    }
    opens = offsets(code, b"{")
    braces = sorted(opens + offsets(code, b"}"))
    if in_directives:
        braces = [i for i in braces if i not in in_directives]
    # depth after each brace; a body opened at brace k (depth D after it) closes at the first later brace
    # where the depth is D - 1 (it moves by one per brace), found at C speed by list.index
    depth = list(accumulate(map(_NEG_DEPTH.__getitem__, map(code.__getitem__, braces))))
    end = -1
    for i in opens:  # where ") {" opens a body (tried from the "{" side: most are inside a body)
        if i <= end or i in in_directives or not _after_paren(code, i):
            continue
        k = bisect.bisect_left(braces, i)
        try:
            close = depth.index(depth[k] + 1, k + 1)
        except ValueError:
            break  # never closed: nothing after it is a body either
        end = braces[close]
        s, e = i + 1, end
        d = bisect.bisect_left(sc._dstarts, s)
        whole = d == len(sc._dstarts) or sc._dstarts[d] >= e or _groups_whole(sc, d, e, braces, depth)
        if whole and not keep(s, e):
            found.append((s, e))
            blank_at = _SPACE.search(code, s, e)
            if blank_at is not None:  # "{;}": a body, never a brace initializer, when recovering from errors
                p = blank_at.start()
                found[-1:] = [(s, p), (p + 1, e)]
                stops.append(p)
    # raw string contents (inline Metal sources): never read as nodes
    found += [(r.content_start, r.content_end) for r in sc.raw_strings if not sc.in_directive(r.start)]
    return found, stops


def _groups_whole(sc: SourceFile, d: int, e: int, braces: list[int], depth: list[int]) -> bool:
    """Are the conditional lines from directive ``d`` up to offset ``e`` whole groups (``#if`` ...
    ``#endif``) whose every branch leaves the brace depth as it found it?"""
    code, opened = sc.code, []  # the brace depth at each open group's #if
    for ds, de in sc.directives[d:]:
        if ds >= e:
            break
        m = _CONDITIONAL.match(code, ds, de)
        if m is None:
            continue  # #define, #pragma ...: no branch, its braces are no code braces
        at, word = depth[bisect.bisect_left(braces, ds) - 1], m.group(1)
        if word == b"if":
            opened.append(at)
        elif not opened or opened[-1] != at:
            return False
        elif word == b"endif":
            opened.pop()
    return not opened


def _after_paren(code: bytes, i: int) -> bool:
    """Is the last byte before ``i`` other than space, tab, CR and LF a ")"?"""
    while i > 0:
        lo = max(0, i - 64)
        kept = code[lo:i].rstrip(b" \t\r\n")
        if kept:
            return kept[-1] == 41
        i = lo
    return False


def lean_heads(sc: SourceFile, keep, bodies: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """More the parser need not see, beside lean ``bodies``: the parameter lists of those bodies'
    functions that ``keep`` refuses, and preprocessor lines other than conditionals (#include,
    #define, #pragma ...: includes and macros are read from the text; the #if structure groups
    definitions, so it stays)."""
    code = sc.code
    found = []
    for s, _ in bodies:
        if code[s - 1] != 123:  # "{" opens a body (the rest: a body's part after its ";", raw strings)
            continue
        j = s - 2
        while code[j] in b" \t\r\n":
            j -= 1
        params = _params(code, sc, j) if code[j] == 41 else None
        if params is not None and not keep(*params):
            found.append(params)
    found += [(ds, de) for ds, de in sc.directives if _CONDITIONAL.match(code, ds, de) is None]
    return found


_CONDITIONAL = re.compile(rb"[ \t]*#[ \t]*(if|el|endif\b)")


def _params(code: bytes, sc: SourceFile, close: int) -> tuple[int, int] | None:
    """Inside of the parenthesised list that closes at ``close`` (a body's parameters), when it has
    no preprocessor line; None if empty or not found within a few parentheses."""
    s = close
    for _ in range(8):  # the opener: the nearest "(" before which the parentheses balance
        s = code.rfind(b"(", 0, s)
        if s < 0:
            return None
        if code.count(b"(", s + 1, close) == code.count(b")", s + 1, close):
            if close - s < 3:
                return None
            d = bisect.bisect_left(sc._dstarts, s)
            return None if d < len(sc._dstarts) and sc._dstarts[d] < close else (s + 1, close)
    return None


_NEG_DEPTH = [0] * 256
_NEG_DEPTH[123], _NEG_DEPTH[125] = -1, 1  # "{" deepens, "}" comes back


def _outside(sc: SourceFile, regions: list[tuple[int, int]]) -> list[tree_sitter.Range]:
    """The parser's included ranges: everything but ``regions`` (points are (row, byte column))."""
    starts = sc.line_starts
    rows = bisect.bisect_right
    out: list[tree_sitter.Range] = []
    add, Range = out.append, tree_sitter.Range
    pos = row = 0
    regions = sorted(regions)
    regions.append((len(sc.data), len(sc.data)))
    for s, e in regions:
        if s > pos:  # offsets only grow: each row is looked up from the last one found
            r1 = rows(starts, pos, row) - 1
            row = rows(starts, s, r1) - 1
            add(Range((r1, pos - starts[r1]), (row, s - starts[row]), pos, s))
        if e > pos:
            pos = e
    return out


def _function(node: tree_sitter.Node, parsed: bytes | None = None) -> FnNode | None:
    """``parsed``: the bytes the tree was parsed from (a child's text is a slice of them)."""
    decl = node.child_by_field_name("declarator")
    body = node.child_by_field_name("body")
    if decl is None or body is None:
        return None
    kind = "function"
    name_node = None
    while decl is not None:
        t = decl.type
        if t == "function_declarator":
            inner = decl.child_by_field_name("declarator")
            if inner is not None and inner.type == "function_declarator":
                callee = inner.child_by_field_name("declarator")
                if callee is not None and callee.text == b"TORCH_IMPL_FUNC":
                    kind = "impl_func"
                    params = inner.child_by_field_name("parameters")
                    name_node = _first_word(params)
                    break
            decl = inner
        elif t in _DECLARATOR_WRAPPERS:
            decl = decl.child_by_field_name("declarator") or (decl.named_children[-1] if decl.named_children else None)
        elif t in ("qualified_identifier", "template_function"):
            decl = decl.child_by_field_name("name")
        else:
            name_node = decl
            break
    if name_node is None or name_node.type not in (
        "identifier",
        "field_identifier",
        "type_identifier",
        "destructor_name",
        "operator_name",
    ):
        return None
    start = node.start_byte
    parent = node.parent
    if parent is not None and parent.type == "template_declaration":
        start = parent.start_byte
    # a storage class stands before the body: its text is searched, never the body's
    is_static = (parsed is None or parsed.find(b"static", node.start_byte, body.start_byte) >= 0) and any(
        c.type == "storage_class_specifier" and c.text == b"static" for c in node.children
    )
    return FnNode(
        name=name_node.text.decode("utf-8", "replace"),
        kind=kind,
        node=node,
        start=start,
        end=node.end_byte,
        name_start=name_node.start_byte,
        name_end=name_node.end_byte,
        body_start=body.start_byte,
        body_end=body.end_byte,
        is_static=is_static,
    )


def _first_word(params: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The identifier written inside TORCH_IMPL_FUNC( ... )."""
    if params is None:
        return None
    stack = [params]
    while stack:
        n = stack.pop(0)
        if n.type in ("identifier", "type_identifier"):
            return n
        stack.extend(n.named_children)
    return None


def scan(text: str, start: int = 0, end: int | None = None, wt: str | None = None) -> tuple[set[str], set[str]]:
    """(identifiers, called identifiers) in ``text`` between offsets, keywords included;
    ``wt``: ``word_text`` of ``text``, when the caller has it."""
    end = len(text) if end is None else end
    if start and _WORD_BYTE.match(text, start - 1):  # a word cut at ``start``: the one-pass reading
        found = set(TOKENS.findall(text, start, end))
        ids = {name for name, _ in found}
        ids.discard("")
        return ids, {name for name, paren in found if paren}
    ids = words(wt, start, end) if wt is not None else identifiers(text, start, end)
    backwards = text[end - 1 : start - 1 : -1] if start else text[end - 1 :: -1]
    return ids, {name[::-1] for name in CALLS_REVERSED.findall(backwards)}


def identifiers(text: str, start: int = 0, end: int | None = None) -> set[str]:
    """``scan``'s identifiers alone."""
    ids = set(WORDS.findall(text, start, len(text) if end is None else end))
    ids.discard("")
    return ids


# Bytes that can be in a WORDS match ([A-Za-z0-9_.@]) stay, every other byte becomes a space: a WORDS
# match never crosses a space of the result, so its words split at C speed.
_WORD_RUNS = bytes(b if b < 128 and (chr(b).isalnum() or chr(b) in "_.@") else 32 for b in range(256))


def word_text(code: bytes | bytearray) -> str:
    """``code`` (latin-1) with every byte no identifier or number holds as a space (offsets unchanged)."""
    return code.translate(_WORD_RUNS).decode("latin-1")


def words(wt: str, start: int = 0, end: int | None = None) -> set[str]:
    """``identifiers`` of the text whose ``word_text`` is ``wt``, between offsets: each distinct run is
    a name, a number (a digit first) or, with "." or "@" in it, read by WORDS itself."""
    if start and _WORD_CHAR.match(wt, start - 1):  # WORDS finds no word starting inside a word
        start = _WORD_CHARS.match(wt, start).end()
    runs = set(wt[start:end].split())
    ids = set(filter(str.isidentifier, runs))  # a plain name: no ".", no "@", no digit first
    dotted = [w for w in runs.difference(ids) if "." in w or "@" in w]
    if dotted:  # no match crosses a space: one findall reads them all
        ids.update(WORDS.findall(" ".join(dotted)))
    ids.discard("")
    return ids


def names(raw: set[str]) -> frozenset[str]:
    return frozenset(raw - KEYWORDS)

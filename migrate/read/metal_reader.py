"""Read a Metal kernel source (.metal, or Metal embedded in a .mm raw string).

Finds functor structs, kernel registrations (base macros of c10/metal/indexing.h,
listed in rules/registration.yaml, reached through the file's own convenience
macros), ``[[host_name("...")]]`` names after macro expansion, and kernel
function definitions.  Macros are expanded from their ``#define`` bodies:
the file's own, and those of headers found in ``include_dirs``.
"""
from __future__ import annotations

import bisect
import functools
import re
from pathlib import Path
from typing import Iterable, Sequence


from migrate.tables import load_yaml_text

from migrate.model import Functor, KernelRegistration, MetalFile, ParseError, Span
from migrate.read.columns import char_column
from migrate.read.cpre import (
    TOKEN_RE,
    Expander,
    Macro,
    Tok,
    EXPORT_HIDERS,
    find_functors,
    find_host_names,
    find_kernel_functions,
    parse_define,
    prune_body,
)
from migrate.resources import rules_dir, torch_include_dir

INDEXING_H = "c10/metal/indexing.h"
C10_METAL_DIR = "/c10/metal/"
LIBRARY = "c10/metal"  # origin of the table's stand-in definitions when no indexing.h is at hand
INTERESTING = frozenset({"host_name", "struct", "kernel"})
SPECIAL = INTERESTING | {"void"}

MASTER_RE = re.compile(
    r"""
     (?P<id>[A-Za-z_]\w*)
    |(?P<num>\d[\w.]*)
    |(?P<dir>^[ \t]*\#(?:\\\r?\n|/\*.*?\*/|[^\n])*)
    |(?P<bc>/\*.*?\*/)
    |(?P<badbc>/\*)
    |(?P<lc>//[^\n]*)
    |(?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
    """,
    re.M | re.S | re.X,
)
HEADER_RE = re.compile(
    r"""
     (?P<dir>^[ \t]*\#(?:\\\r?\n|/\*.*?\*/|[^\n])*)
    |(?P<bc>/\*.*?(?:\*/|\Z))
    |(?P<lc>//[^\n]*)
    |(?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
    """,
    re.M | re.S | re.X,
)
DIRECTIVE_RE = re.compile(r"[ \t]*#[ \t]*(\w*)(.*)", re.S)
INCLUDE_RE = re.compile(r"\s*[<\"]([^>\"]+)[>\"]")
COMMENT_OR_STRING_RE = re.compile(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*.*?\*/", re.S)
STRUCT_AHEAD_RE = re.compile(r"\s+(\w+)_functor\s*(?:\{|:(?!:))")
KERNEL_AHEAD_RE = re.compile(r"\s+void\s+(\w+)\s*\(")
VOID_KERNEL_AHEAD_RE = re.compile(r"\s+kernel\s+(\w+)\s*\(")
OPEN_PAREN_AHEAD_RE = re.compile(r"[ \t]*(\()")


# ------------------------------------------------------------ rules table
@functools.lru_cache(maxsize=4)
def registration_table(path: str | None = None) -> dict[str, tuple[str, ...]]:
    """rules/registration.yaml: base macro -> roles of its arguments."""
    p = Path(path) if path else rules_dir() / "registration.yaml"
    raw = load_yaml_text(p.read_text(encoding="utf-8")) or {}
    table: dict[str, tuple[str, ...]] = {}
    for macro, roles in raw.items():
        if not isinstance(roles, list) or [str(r) for r in roles].count("name") != 1:
            raise ValueError(f"{p}: {macro}: roles must be a list with exactly one 'name'")
        table[str(macro)] = tuple(str(r) for r in roles)
    return table


# ------------------------------------------------------------ directives
def _directive_text(raw: str) -> tuple[str, str]:
    """(directive name, rest) with line splices joined and comments blanked."""
    joined = raw.replace("\\\r\n", " ").replace("\\\n", " ")
    joined = COMMENT_OR_STRING_RE.sub(lambda m: m.group() if m.group()[0] in "\"'" else " ", joined)
    m = DIRECTIVE_RE.match(joined)
    return (m.group(1), m.group(2)) if m else ("", "")


# Events replayed in order: ("define", Macro) | ("undef", name) | ("include", rel)
Event = tuple[str, object]


@functools.lru_cache(maxsize=256)
def _header_events(path: str, mtime_ns: int) -> tuple[Event, ...]:
    try:
        text = Path(path).read_bytes().decode("latin-1")
    except OSError:
        return ()
    events: list[Event] = []
    skip_depth = 0  # inside "#if 0"
    for m in HEADER_RE.finditer(text):
        if m.lastgroup != "dir":
            continue
        name, rest = _directive_text(m.group())
        skip_depth = _track_if0(name, rest, skip_depth)
        if skip_depth or name not in ("define", "undef", "include"):
            continue
        if name == "define":
            mac = parse_define(rest, [])
            if mac is not None:
                mac.origin = path
                mac.line = text.count("\n", 0, m.start()) + 1
                events.append(("define", mac))
        elif name == "undef":
            events.append(("undef", rest.strip()))
        else:
            inc = INCLUDE_RE.match(rest)
            if inc:
                events.append(("include", inc.group(1)))
    return tuple(events)


def _track_if0(name: str, rest: str, depth: int) -> int:
    """Depth of nested conditionals inside an ``#if 0`` block (0: not skipping)."""
    if depth:
        if name in ("if", "ifdef", "ifndef"):
            return depth + 1
        if name == "endif" or (depth == 1 and name in ("else", "elif")):
            return depth - 1
        return depth
    if name == "if" and rest.strip() == "0":
        return 1
    return 0


def _resolve(dirs: tuple[str, ...], rel: str) -> Path | None:
    for d in dirs:
        p = Path(d) / rel
        if p.is_file():
            return p
    return None


@functools.lru_cache(maxsize=256)
def header_macros(dirs: tuple[str, ...], rel: str) -> dict[str, Macro]:
    """Macros defined by header ``rel`` (and what it includes), found in ``dirs``; cached."""
    table: dict[str, Macro] = {}
    _replay(dirs, rel, table, set())
    return table


def _replay(dirs: tuple[str, ...], rel: str, table: dict[str, Macro], seen: set[str]) -> None:
    p = _resolve(dirs, rel)
    if p is None or str(p) in seen:
        return
    seen.add(str(p))
    try:
        mtime = p.stat().st_mtime_ns
    except OSError:
        return
    for kind, arg in _header_events(str(p), mtime):
        if kind == "define":
            assert isinstance(arg, Macro)
            table[arg.name] = arg
        elif kind == "undef":
            table.pop(str(arg), None)
        else:
            _replay(dirs, str(arg), table, seen)


def default_include_dirs(tree_root: Path | None = None) -> tuple[Path, ...]:
    """The tree's own c10/metal if it has one, else the installed torch's headers."""
    if tree_root is not None and (Path(tree_root) / INDEXING_H).is_file():
        return (Path(tree_root),)
    inc = torch_include_dir()
    return (inc,) if inc is not None and (inc / INDEXING_H).is_file() else ()


# ------------------------------------------------------------ positions
class _Positions:
    def __init__(self, data: bytes, path: str, base_line: int, base_column: int, base_offset: int) -> None:
        self.data = data
        self.path = path
        self.base_line, self.base_column, self.base_offset = base_line, base_column, base_offset
        self.starts = [0] + [m.end() for m in re.finditer(rb"\n", data)]

    def line_col(self, off: int) -> tuple[int, int]:
        idx = bisect.bisect_right(self.starts, off) - 1
        col = char_column(self.data, self.starts[idx], off)
        if idx == 0:
            col += self.base_column - 1
        return self.base_line + idx, col

    def span(self, start: int, end: int) -> Span:
        l1, c1 = self.line_col(start)
        l2, c2 = self.line_col(end)
        return Span(self.path, l1, c1, l2, c2, self.base_offset + start, self.base_offset + end)

    def error(self, off: int, message: str) -> ParseError:
        line, col = self.line_col(off)
        return ParseError(self.path, line, col, message)


# ------------------------------------------------------------ the reader
class _Reader:
    def __init__(self, data: bytes, path: str, include_dirs: Sequence[Path], pos: _Positions) -> None:
        self.text = data.decode("latin-1")  # one char per byte: offsets are byte offsets
        self.path = path
        self.dirs = tuple(str(d) for d in include_dirs)
        self.pos = pos
        self.table = registration_table()
        self.macros: dict[str, Macro] = {}
        fallback = dict(header_macros(self.dirs, INDEXING_H)) if self.dirs else {}
        for name, roles in self.table.items():  # base macros stay recognisable without indexing.h
            fallback.setdefault(name, Macro(name, tuple(f"_{k}" for k in range(len(roles))), [], origin=LIBRARY))
        self.expander = Expander(self.macros, frozenset(self.table), self._on_base, fallback)
        self.expander.body_of = self._pruned
        self.relevance: dict[str, int] = {}
        self.pruned: dict[int, list[Tok]] = {}
        self._forget()
        self.functors: list[Functor] = []
        self.registrations: list[KernelRegistration] = []
        self.host_names: set[str] = set()
        self.kernels: set[str] = set()
        self.hidden_kernels: set[str] = set()  # templates and [[host_name]]-attributed definitions
        self.errors: list[ParseError] = []
        self._invocation: tuple[int, int, str] = (0, 0, "")

    # -- macro table
    def _lookup(self, name: str) -> Macro | None:
        return self.expander.lookup(name)

    def _keep_name(self, name: str) -> bool:
        mac = self._lookup(name)
        return mac is not None and self._relevant(mac)

    def _pruned(self, mac: Macro) -> list[Tok]:
        if self._kind(mac) < 2:
            return mac.body  # name parts (pastes, object-like strings inside host_name(...)) stay whole
        body = self.pruned.get(id(mac))
        if body is None:
            body = self.pruned[id(mac)] = prune_body(mac, self._keep_name)
        return body

    def _relevant(self, mac: Macro) -> bool:
        """Can expanding ``mac`` reach a registration, host_name, functor or kernel (or build a name)?"""
        return self._kind(mac) > 0

    def _kind(self, mac: Macro) -> int:
        """2: structural (host_name/struct/kernel, a registration, or a call of a
        parameter or of a structural macro); 1: only pastes names; 0: neither."""
        if mac.name in self.expander.base:
            return 2
        known = self.relevance.get(mac.name)
        if known is not None:
            return known
        self.relevance[mac.name] = 0  # cycle guard
        params = set(mac.params or ())
        body = mac.body
        kind = 0
        for k, t in enumerate(body):
            if t.kind != "id":
                if t.text == "##":
                    kind = max(kind, 1)
                continue
            nxt = body[k + 1].text if k + 1 < len(body) else ""
            if t.text in INTERESTING or (t.text in params and nxt == "("):
                kind = 2
            else:
                other = self._lookup(t.text)
                if other is not None and other is not mac:
                    kind = max(kind, self._kind(other))
            if kind == 2:
                break
        self.relevance[mac.name] = kind
        return kind

    def _directive(self, raw: str, off: int, skip: int) -> int:
        name, rest = _directive_text(raw)
        skip = _track_if0(name, rest, skip)
        if skip:
            return skip
        if name == "define":
            errs: list[str] = []
            mac = parse_define(rest, errs)
            for e in errs:
                self.errors.append(self.pos.error(off, e))
            if mac is not None:
                mac.origin = self.path
                mac.line = self.pos.line_col(off)[0]
                self.macros[mac.name] = mac
                self._forget()
        elif name == "undef":
            self.macros.pop(rest.strip(), None)
            self._forget()
        elif name == "include":
            inc = INCLUDE_RE.match(rest)
            if inc and self.dirs:
                self.macros.update(header_macros(self.dirs, inc.group(1)))
                self._forget()
        return skip

    def _forget(self) -> None:
        self.relevance.clear()
        self.pruned.clear()
        self.expander.base = frozenset(n for n in self.table if self._is_library_macro(n))

    def _is_library_macro(self, name: str) -> bool:
        """Is the definition of ``name`` in scope c10/metal's registration macro, with the table's arity?
        A tree's own macro of the same name (2.7.0a0's two-parameter REGISTER_BINARY_OP) is expanded
        as the tree defines it, not read through the table."""
        mac = self._lookup(name)
        if mac is None:
            return False
        from_library = mac.origin == LIBRARY or C10_METAL_DIR in mac.origin.replace("\\", "/")
        return from_library and mac.params is not None and len(mac.params) == len(self.table[name])

    # -- invocations
    def _read_invocation(self, name: str, start: int, p: int, function_like: bool) -> tuple[list[Tok], int] | None:
        """Tokens of ``name(...)`` starting at text offset ``p`` (just after the name)."""
        toks = [Tok("id", name)]
        text, n = self.text, len(self.text)
        if not function_like:  # an object-like macro may expand to a function-like one's name
            m = OPEN_PAREN_AHEAD_RE.match(text, p)
            if not m:
                return toks, p
            p = m.start(1)
        depth = 0
        space = False
        while p < n:
            m = TOKEN_RE.match(text, p)
            assert m is not None
            kind, val = m.lastgroup, m.group()
            p = m.end()
            if kind in ("ws", "nl", "comment"):
                space = True
                continue
            if kind == "badcomment":
                self.errors.append(self.pos.error(m.start(), "unterminated comment"))
                return None
            if depth == 0 and val != "(":
                return None  # a function-like macro's name without '(' is not an invocation
            if kind == "badstr":
                self.errors.append(self.pos.error(m.start(), "unterminated string literal"))
                kind = "other"
            toks.append(Tok(kind, val, space))  # type: ignore[arg-type]
            space = False
            if kind == "punc":
                if val == "(":
                    depth += 1
                elif val == ")":
                    depth -= 1
                    if depth == 0:
                        return toks, p
                elif val == ";":
                    self.errors.append(self.pos.error(start, f"unbalanced parentheses in invocation of {name}"))
                    return None
        self.errors.append(self.pos.error(start, f"unterminated invocation of macro {name}"))
        return None

    def _on_base(self, macro: str, args: list[list[Tok]], result: list[Tok]) -> bool:
        start, end, written = self._invocation
        roles = self.table[macro]
        texts = ["".join((" " if k and t.space else "") + t.text for k, t in enumerate(a)) for a in args]
        names = frozenset(find_host_names(result))
        self.host_names.update(names)
        self._add_kernels(find_kernel_functions(result))
        self.registrations.append(
            KernelRegistration(
                macro=macro,
                op=texts[roles.index("name")],
                dtypes=tuple(t for t, r in zip(texts, roles) if r.startswith("dtype")),
                path=self.path,
                span=self.pos.span(start, end),
                via=None if written == macro else written,
                host_names=names,
            )
        )
        return False

    def _expand_at(self, name: str, mac: Macro, start: int, p: int) -> int:
        got = self._read_invocation(name, start, p, mac.params is not None)
        if got is None:
            return p
        toks, end = got
        self._invocation = (start, end, name)
        result = self.expander.expand(toks)
        for e in self.expander.errors:
            self.errors.append(self.pos.error(start, e))
        self.expander.errors.clear()
        self.expander.budget = 2_000_000
        self.host_names.update(find_host_names(result))
        self._add_kernels(find_kernel_functions(result))
        span = None
        for f in find_functors(result):
            span = span or self.pos.span(start, end)
            self.functors.append(Functor(f, self.path, span))
        return end

    def _literal_host_name(self, start: int, p: int) -> int:
        got = self._read_invocation("host_name", start, p, True)
        if got is None:
            return p
        toks, end = got
        result = self.expander.expand(toks)
        self.expander.errors.clear()
        self.host_names.update(find_host_names(result))
        return end

    def run(self) -> MetalFile:
        text = self.text
        p, skip = 0, 0
        search = MASTER_RE.search
        macros, fallback = self.macros, self.expander.fallback
        while True:
            m = search(text, p)
            if m is None:
                break
            kind = m.lastgroup
            p = m.end()
            if kind == "dir":
                skip = self._directive(m.group(), m.start(), skip)
            elif skip or kind != "id":
                if kind == "badbc" and not skip:
                    self.errors.append(self.pos.error(m.start(), "unterminated comment"))
                    break
            else:
                name = m.group()
                if name in SPECIAL or name in macros or name in fallback:
                    p = self._identifier(name, m.start(), p)
        return MetalFile(
            path=self.path,
            functors=tuple(self.functors),
            registrations=tuple(self.registrations),
            host_names=frozenset(self.host_names),
            kernel_functions=frozenset(self.kernels),
            hidden_kernels=frozenset(self.hidden_kernels),
            errors=tuple(self.errors),
        )

    def _add_kernels(self, found: Iterable[tuple[str, bool]]) -> None:
        for name, exported in found:
            self.kernels.add(name)
            if not exported:
                self.hidden_kernels.add(name)

    def _identifier(self, name: str, start: int, p: int) -> int:
        text = self.text
        if name == "struct":
            a = STRUCT_AHEAD_RE.match(text, p)
            if a:
                self.functors.append(Functor(a.group(1), self.path, self.pos.span(start, a.end(1) + len("_functor"))))
            return p
        if name in ("kernel", "void"):
            a = (KERNEL_AHEAD_RE if name == "kernel" else VOID_KERNEL_AHEAD_RE).match(text, p)
            if a:
                before = text[max(0, start - 200):start].rstrip()[-1:]
                self._add_kernels([(a.group(1), before not in EXPORT_HIDERS)])
            return p
        if name == "host_name":
            return self._literal_host_name(start, p)
        mac = self._lookup(name)
        if mac is not None and self._relevant(mac):
            return self._expand_at(name, mac, start, p)
        return p


def read_metal_source(
    data: bytes,
    path: str,
    *,
    include_dirs: Sequence[Path] = (),
    base_line: int = 1,
    base_offset: int = 0,
    base_column: int = 1,
) -> MetalFile:
    """Read Metal source ``data``; positions are shifted by the ``base_*`` values
    (for Metal embedded in another file: line, byte offset and column of its first byte)."""
    pos = _Positions(data, path, base_line, base_column, base_offset)
    try:
        return _Reader(data, path, include_dirs, pos).run()
    except RecursionError:
        return MetalFile(path, (), (), frozenset(), frozenset(), (ParseError(path, base_line, 1, "macros nest too deeply", partial=True),))


def read_metal_file(file: Path, rel: str, include_dirs: Sequence[Path] = ()) -> MetalFile:
    try:
        data = Path(file).read_bytes()
    except OSError as exc:
        return MetalFile(rel, (), (), frozenset(), frozenset(), (ParseError(rel, 1, 1, f"cannot read: {exc.strerror}", partial=True),))
    return read_metal_source(data, rel, include_dirs=include_dirs)

"""Read a Metal kernel source (.metal, or Metal embedded in a .mm raw string).

Finds functor structs, kernel registrations (base macros of c10/metal/indexing.h,
listed in rules/registration.yaml, reached through the file's own convenience
macros), ``[[host_name("...")]]`` names after macro expansion, and kernel
function definitions.  Macros are expanded from their ``#define`` bodies:
the file's own, and those of headers found in ``include_dirs``.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Iterable, Sequence

from migrate.model import Functor, KernelRegistration, MetalFile, ParseError
from migrate.read.metal_macros import (
    EXPORT_HIDERS,
    find_functors,
    find_host_names,
    find_kernel_functions,
    prune_body,
)
from migrate.resources import rules_dir, torch_include_dir
from migrate.source import SourceFile, source_file
from migrate.source.macros import Expander, Macro, directive, parse_define
from migrate.source.tokens import Tok
from migrate.tables import load_yaml_text

INDEXING_H = "c10/metal/indexing.h"
C10_METAL_DIR = "/c10/metal/"
LIBRARY = "c10/metal"  # origin of the table's stand-in definitions when no indexing.h is at hand
INTERESTING = frozenset({"host_name", "struct", "kernel"})
SPECIAL = INTERESTING | {"void"}
INCLUDE_RE = re.compile(r"\s*[<\"]([^>\"]+)[>\"]")


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
# Events replayed in order: ("define", Macro) | ("undef", name) | ("include", rel)
Event = tuple[str, object]


@functools.lru_cache(maxsize=256)
def _header_events(path: str, mtime_ns: int) -> tuple[Event, ...]:
    try:
        sf = SourceFile(Path(path).read_bytes(), path)
    except OSError:
        return ()
    events: list[Event] = []
    skip_depth = 0  # inside "#if 0"
    text = sf.latin1
    for ds, de in sf.directives:
        name, rest = directive(text[ds:de])
        skip_depth = _track_if0(name, rest, skip_depth)
        if skip_depth or name not in ("define", "undef", "include"):
            continue
        if name == "define":
            mac = parse_define(rest, [], lazy=True)
            if mac is not None:
                mac.origin = path
                mac.line = sf.line_of(ds)
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


_C10_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"](c10/metal/[^>"\n]+)[>"]', re.M)


def warm(datas: Sequence[bytes] = (), include_dirs: Sequence[Path] = ()) -> None:
    """The memos reading ``datas`` (Metal sources, or host files holding Metal strings) expands against: the
    registration table, and the macros of indexing.h and of each c10/metal header they include (parse_pool
    calls this before it forks its readers)."""
    registration_table()
    dirs = tuple(str(d) for d in include_dirs)
    if dirs:
        headers = {INDEXING_H}
        for data in datas:
            if b"c10/metal/" in data:  # a multi-line regex alone tries every line start of ~1 MB of host code
                headers.update(m.group(1).decode("latin-1") for m in _C10_INCLUDE.finditer(data))
        for rel in sorted(headers):
            header_macros(dirs, rel)
    _library(dirs, registration_table())


def default_include_dirs(tree_root: Path | None = None) -> tuple[Path, ...]:
    """The tree's own c10/metal if it has one, else the installed torch's headers."""
    if tree_root is not None and (Path(tree_root) / INDEXING_H).is_file():
        return (Path(tree_root),)
    inc = torch_include_dir()
    return (inc,) if inc is not None and (inc / INDEXING_H).is_file() else ()


def _is_library_definition(mac: Macro, roles: tuple[str, ...]) -> bool:
    from_library = mac.origin == LIBRARY or C10_METAL_DIR in mac.origin.replace("\\", "/")
    return from_library and mac.params is not None and len(mac.params) == len(roles)


_LIBRARY: dict[tuple[str, ...], tuple[object, object, dict[str, Macro], frozenset[str]]] = {}
_NO_MACROS: dict[str, Macro] = {}


def _library(dirs: tuple[str, ...], table: dict[str, tuple[str, ...]]) -> tuple[dict[str, Macro], frozenset[str]]:
    """(the macros looked up when a file defines no such name: indexing.h's, and a stand-in for each base
    macro, which stays recognisable without indexing.h; the base macros before a file defines any), memoized
    per include dirs and table.  Readers only read them."""
    indexing = header_macros(dirs, INDEXING_H) if dirs else _NO_MACROS
    got = _LIBRARY.get(dirs)
    if got is None or got[0] is not table or got[1] is not indexing:
        fallback = dict(indexing)
        for name, roles in table.items():
            if name not in fallback:
                fallback[name] = Macro(name, tuple(f"_{k}" for k in range(len(roles))), [], origin=LIBRARY)
        base = frozenset(n for n in table if _is_library_definition(fallback[n], table[n]))
        got = _LIBRARY[dirs] = (table, indexing, fallback, base)
    return got[2], got[3]


# ------------------------------------------------------------ the reader
class _Reader:
    def __init__(self, sf: SourceFile, include_dirs: Sequence[Path]) -> None:
        self.sf = sf
        self.path = sf.path
        self.dirs = tuple(str(d) for d in include_dirs)
        self.table = registration_table()
        self.macros: dict[str, Macro] = {}
        fallback, base = _library(self.dirs, self.table)
        self.expander = Expander(self.macros, base, self._on_base, fallback)
        self.expander.body_of = self._pruned
        self.relevance: dict[str, int] = {}
        self.pruned: dict[int, list[Tok]] = {}
        self.functors: list[Functor] = []
        self.registrations: list[KernelRegistration] = []
        self.host_names: set[str] = set()
        self.kernels: set[str] = set()
        self.hidden_kernels: set[str] = set()  # templates and [[host_name]]-attributed definitions
        self.errors: list[ParseError] = []
        self._invocation: tuple[int, int, str] = (0, 0, "")

    def error(self, off: int, message: str) -> None:
        line, col = self.sf.position(off)
        self.errors.append(ParseError(self.path, line, col, message))

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
        name, rest = directive(raw)
        skip = _track_if0(name, rest, skip)
        if skip:
            return skip
        if name == "define":
            errs: list[str] = []
            mac = parse_define(rest, errs)
            for e in errs:
                self.error(off, e)
            if mac is not None:
                mac.origin = self.path
                mac.line = self.sf.line_of(off)
                self.macros[mac.name] = mac
                self._forget((mac.name,))
        elif name == "undef":
            gone = rest.strip()
            self.macros.pop(gone, None)
            self._forget((gone,))
        elif name == "include":
            inc = INCLUDE_RE.match(rest)
            if inc and self.dirs:
                found = header_macros(self.dirs, inc.group(1))
                self.macros.update(found)
                self._forget(found)
        return skip

    def _forget(self, changed: Iterable[str] | None = None) -> None:
        """Drop what depends on the macro table; ``changed``: the names (re)defined or undefined, when known
        (the base macros change only with a name of the registration table)."""
        self.relevance.clear()
        self.pruned.clear()
        if changed is None or not self.table.keys().isdisjoint(changed):
            self.expander.base = frozenset(n for n in self.table if self._is_library_macro(n))

    def _is_library_macro(self, name: str) -> bool:
        """Is the definition of ``name`` in scope c10/metal's registration macro, with the table's arity?
        A tree's own macro of the same name (2.7.0a0's two-parameter REGISTER_BINARY_OP) is expanded
        as the tree defines it, not read through the table."""
        mac = self._lookup(name)
        if mac is None:
            return False
        return _is_library_definition(mac, self.table[name])

    # -- invocations
    def _read_invocation(self, toks: list[Tok], i: int, function_like: bool) -> tuple[list[Tok], int] | None:
        """Tokens of the invocation whose name is ``toks[i]`` and the index after it."""
        name = toks[i]
        n = len(toks)
        j = i + 1
        if not function_like:  # an object-like macro may expand to a function-like one's name
            if j >= n or toks[j].text != "(" or "\n" in toks[j].space:
                return [name], j
        elif j >= n or toks[j].text != "(":
            return None  # a function-like macro's name without '(' is not an invocation
        depth = 0
        while j < n:
            t = toks[j]
            j += 1
            if t.kind == "other" and t.text in ('"', "'", "/*"):
                if t.text == "/*":
                    self.error(t.start, "unterminated comment")
                    return None
                self.error(t.start, "unterminated string literal")
            elif t.kind == "punc":
                if t.text == "(":
                    depth += 1
                elif t.text == ")":
                    depth -= 1
                    if depth == 0:
                        return toks[i:j], j
                elif t.text == ";":
                    self.error(name.start, f"unbalanced parentheses in invocation of {name.text}")
                    return None
        self.error(name.start, f"unterminated invocation of macro {name.text}")
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
                span=self.sf.span(start, end),
                via=None if written == macro else written,
                host_names=names,
            )
        )
        return False

    def _expand_at(self, toks: list[Tok], i: int, mac: Macro) -> int:
        got = self._read_invocation(toks, i, mac.params is not None)
        if got is None:
            return i + 1
        inv, nxt = got
        start, end = inv[0].start, inv[-1].end
        self._invocation = (start, end, inv[0].text)
        result = self.expander.expand(inv)
        for e in self.expander.errors:
            self.error(start, e)
        self.expander.errors.clear()
        self.expander.budget = 2_000_000
        self.host_names.update(find_host_names(result))
        self._add_kernels(find_kernel_functions(result))
        span = None
        for f in find_functors(result):
            span = span or self.sf.span(start, end)
            self.functors.append(Functor(f, self.path, span))
        return nxt

    def _literal_host_name(self, toks: list[Tok], i: int) -> int:
        got = self._read_invocation(toks, i, True)
        if got is None:
            return i + 1
        inv, nxt = got
        result = self.expander.expand(inv)
        self.expander.errors.clear()
        self.host_names.update(find_host_names(result))
        return nxt

    def run(self) -> MetalFile:
        toks = self.sf.tokens()
        skip, resume = 0, 0
        macros, known = self.macros, SPECIAL.union(self.expander.fallback)  # one test for most names
        for i, t in enumerate(toks):
            if i < resume:
                continue  # read with the invocation before
            kind = t.kind
            if kind == "id":
                if not skip:
                    name = t.text
                    if name in known or name in macros:
                        resume = self._identifier(toks, i)
            elif kind == "dir":
                skip = self._directive(t.text, t.start, skip)
            elif kind == "other" and not skip and t.text == "/*":
                self.error(t.start, "unterminated comment")
                break
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

    def _identifier(self, toks: list[Tok], i: int) -> int:
        t = toks[i]
        name = t.text
        ahead = [x.text for x in toks[i + 1 : i + 4]]
        if name == "struct":
            nm = toks[i + 1] if i + 1 < len(toks) else None
            if (
                nm is not None
                and nm.kind == "id"
                and len(nm.text) > 8
                and nm.text.endswith("_functor")
                and ahead[1:2]
                and ahead[1] in ("{", ":")
            ):
                self.functors.append(Functor(nm.text[:-8], self.path, self.sf.span(t.start, nm.end)))
            return i + 1
        if name in ("kernel", "void"):
            other = "void" if name == "kernel" else "kernel"
            if len(ahead) == 3 and ahead[0] == other and toks[i + 2].kind == "id" and ahead[2] == "(":
                before = toks[i - 1].text[-1:] if i else ""
                self._add_kernels([(ahead[1], before not in EXPORT_HIDERS)])
            return i + 1
        if name == "host_name":
            return self._literal_host_name(toks, i)
        mac = self._lookup(name)
        if mac is not None and self._relevant(mac):
            return self._expand_at(toks, i, mac)
        return i + 1


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
    # shared with the review rules' flow analysis
    sf = source_file(data, path, base_line=base_line, base_column=base_column, base_offset=base_offset)
    try:
        return _Reader(sf, include_dirs).run()
    except RecursionError:
        return MetalFile(
            path,
            (),
            (),
            frozenset(),
            frozenset(),
            (ParseError(path, base_line, 1, "macros nest too deeply", partial=True),),
        )


read_metal_source.warm = warm  # type: ignore[attr-defined]  (parse_pool: before it forks its readers)


def read_metal_file(file: Path, rel: str, include_dirs: Sequence[Path] = ()) -> MetalFile:
    try:
        data = Path(file).read_bytes()
    except OSError as exc:
        return MetalFile(
            rel,
            (),
            (),
            frozenset(),
            frozenset(),
            (ParseError(rel, 1, 1, f"cannot read: {exc.strerror}", partial=True),),
        )
    return read_metal_source(data, rel, include_dirs=include_dirs)

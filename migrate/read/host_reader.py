"""Read an MPS host file (.mm / .cpp / .h) into a model.HostFile.

    read_host_file(data, path) -> HostFile
    load_markers() -> {"mpsgraph": frozenset, "metal": frozenset}

Objective-C is neutralised (objc_neutral) before tree-sitter-cpp parses the
file; file-local generator macros (``CREATE_..._FUNC(...)``,
``REGISTER_UNARY_TI_DISPATCH(...)``) are expanded per invocation
(``migrate.source.macros``) and their expansions read the same way.
"""

from __future__ import annotations

import re
from functools import lru_cache


from migrate.tables import kernel_launch_helpers, load_markers

from ..model import (
    HostFile,
    HostFunction,
    HostSite,
    InlineMetal,
    KernelCall,
    NativeInclude,
    ParseError,
    Span,
    StubRegistration,
)
from migrate.source import SourceFile
from migrate.source.macros import Invocation, Macro, expand, find_invocations, find_macros
from migrate.source.tokens import blank
from .cpp_unit import FnNode, Unit, names, scan, word_text, words
from .host_sites import find_sites, needs_nodes, within
from migrate.source.literal_search import matches_at

_INCLUDE = re.compile(rb'[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]')
_NATIVE_H = re.compile(r"ATen/ops/(\w+)_native\.h")
_REGISTER = re.compile(  # literal first bytes keep the search fast; word start checked by callers
    rb"(REGISTER_(?:MPS_)?DISPATCH)[ \t]*\(\s*([A-Za-z_][\w:]*)\s*,\s*&?\s*([A-Za-z_][\w:]*)\s*\)([ \t]*;)?"
)
_REGISTER_WORDS = (b"REGISTER_",)  # where its matches start
_VAR_BEFORE = re.compile(rb"(?:\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?=|[\w>*&]\s+([A-Za-z_]\w*)\s*[({])\s*$")
_ITER_PARAM = r"TensorIterator\w*\s*&?\s*{}\b"
_NOT_VARIABLES = frozenset({"return", "else", "case"})
_NOT_CALLS = frozenset({"TORCH_IMPL_FUNC"})  # the definition's own head
_CALL_PAREN = re.compile(rb"[ \t]*\(")


@lru_cache(maxsize=1)
def _all_markers() -> frozenset[str]:
    out: frozenset[str] = frozenset()
    for v in load_markers().values():
        out |= v
    return out


def warm() -> None:
    """The tables every read consults (parse_pool calls this before it forks its readers)."""
    _all_markers()
    _kernel_call_pattern()
    _helper_words()


def read_host_file(data: bytes, path: str) -> HostFile:
    try:
        return _Reader(data, path).read()
    except Exception as exc:  # never a traceback: report and return what is safe
        return HostFile(
            path,
            (),
            (),
            (),
            (),
            (),
            frozenset(),
            errors=(ParseError(path, 1, 1, f"host reader failed: {type(exc).__name__}: {exc}", partial=True),),
        )


def may_hold_metal(data: bytes) -> bool:
    """Whether a host file can hold Metal raw strings (False: its model has no ``inline_metal``)."""
    return _RAW_OPEN.search(data) is not None


_RAW_OPEN = re.compile(rb'R"')  # re's literal search takes half the time of ``in`` here (memchr for "R")


def read_inline_metal(data: bytes, path: str) -> tuple[InlineMetal, ...]:
    """The Metal raw strings of a host file, as read_host_file's model has them."""
    if not may_hold_metal(data):
        return ()
    try:
        return tuple(_Reader(data, path).inline_metal())
    except Exception:  # as read_host_file: its model has none then
        return ()


class _Reader:
    def __init__(self, data: bytes, path: str) -> None:
        self.data = data
        self.path = path
        self.sc: SourceFile = SourceFile(data, path)
        self.errors: list[ParseError] = []
        self.markers = _all_markers()
        try:
            data.isascii() or data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = self.sc.line_of(exc.start)
            self.errors.append(
                ParseError(
                    path,
                    line,
                    self.sc.column_of(exc.start),
                    f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); read as Latin-1",
                )
            )

    # ------------------------------------------------------------ positions
    def span(self, start: int, end: int) -> Span:
        return self.sc.span(start, end)

    def node_span(self, node, start: int | None = None) -> Span:
        return self.span(node.start_byte if start is None else start, node.end_byte)

    # ----------------------------------------------------------------- read
    def read(self) -> HostFile:
        sc = self.sc
        code = sc.code
        macros = find_macros(sc)
        generators = _generators(macros)
        unterminated: list[int] = []
        invocations = find_invocations(sc, set(generators), unterminated) if generators else []
        for pos in unterminated:
            self.errors.append(
                ParseError(
                    self.path, sc.line_of(pos), sc.column_of(pos), "macro invocation without closing parenthesis"
                )
            )
        launches = _launches(code)
        unit = Unit(sc, [(i.start, i.end) for i in invocations], keep=_keep(code, launches))

        generated_ids: set[str] = set()
        generated: list = [[], [], [], []]  # functions, registrations, kernel calls, sites
        ident_code = bytearray(code)
        for inv in invocations:
            more = self.expansion(inv, generators, generated_ids)
            for bucket, items in zip(generated, more):
                bucket += items
            # an argument that is the generated function's whole name is its declarator
            own = {f.name for f in more[0]}
            for (a, b), arg in zip(inv.arg_spans, inv.args):
                if arg.decode("latin-1") in own:
                    ident_code[a:b] = blank(code[a:b])

        includes = self.includes(ident_code)
        functions: list[HostFunction] = []
        for fn in unit.functions:
            ident_code[fn.name_start : fn.name_end] = blank(code[fn.name_start : fn.name_end])
        ident_text, wt = ident_code.decode("latin-1"), word_text(ident_code)
        file_ids: set[str] = set()
        pos = 0
        for fn in unit.functions:
            if fn.start < pos:
                continue  # nested in an ERROR region already covered
            file_ids |= words(wt, pos, fn.start)
            fn_ids, fn_calls = scan(ident_text, fn.start, fn.end, wt)
            file_ids |= fn_ids
            pos = fn.end
            functions.append(self.function(fn, fn_ids, fn_calls))
        file_ids |= words(wt, pos)

        registrations = [
            self.registration(m)
            for m in matches_at(_REGISTER, code, _REGISTER_WORDS)
            if _word_start(code, m.start()) and not sc.in_directive(m.start())
        ]
        kernel_calls = _kernel_calls(unit, lambda s, e: self.span(s, e)) if launches else []
        sites = [HostSite(k, self.path, self.span(s, e), f, d) for k, s, e, f, d in find_sites(unit)]
        functions += generated[0]
        registrations += generated[1]
        kernel_calls += generated[2]
        sites += generated[3]
        for node in unit.top_errors:
            self.top_error(node)

        all_ids = names(file_ids) | generated_ids
        functions.sort(key=lambda f: f.span.start)
        registrations.sort(key=lambda r: r.span.start)
        kernel_calls.sort(key=lambda k: k.span.start)
        sites.sort(key=lambda s: (s.span.start, s.kind))
        return HostFile(
            path=self.path,
            functions=tuple(functions),
            registrations=tuple(registrations),
            kernel_calls=tuple(kernel_calls),
            includes=tuple(includes),
            inline_metal=tuple(self.inline_metal()),
            identifiers=frozenset(all_ids),
            errors=tuple(self.errors),
            sites=tuple(sites),
        )

    # ------------------------------------------------------------ functions
    def function(self, fn: FnNode, fn_ids: set[str], fn_calls: set[str]) -> HostFunction:
        ids = names(fn_ids)
        span = self.node_span(fn.node, fn.start)
        return HostFunction(
            name=fn.name,
            path=self.path,
            span=span,
            kind=fn.kind,
            is_static=fn.is_static,
            calls=names(fn_calls) - _NOT_CALLS,
            identifiers=ids,
            markers=ids & self.markers,
        )

    def expansion(self, inv: Invocation, generators: dict[str, Macro], generated_ids: set[str]):
        """Functions, registrations, kernel calls and sites one generator invocation produces."""
        macro = generators[inv.macro]
        if len(inv.args) != len(macro.params) and not macro.variadic:
            self.errors.append(
                ParseError(
                    self.path,
                    self.sc.line_of(inv.start),
                    self.sc.column_of(inv.start),
                    f"{inv.macro} expects {len(macro.params)} arguments, got {len(inv.args)}",
                )
            )
        esc = SourceFile(expand(macro, inv.args, generators))
        launches = _launches(esc.code)
        unit = Unit(esc, keep=_keep(esc.code, launches))  # bodies no node lookup needs are parsed blank, as in files
        span = self.span(inv.start, inv.end)
        ecode = unit.sc.code
        ident_code = bytearray(ecode)
        for fn in unit.functions:
            ident_code[fn.name_start : fn.name_end] = blank(ecode[fn.name_start : fn.name_end])
        ident_text, wt = ident_code.decode("latin-1"), word_text(ident_code)
        generated_ids |= names(words(wt))
        functions = []
        for fn in unit.functions:
            fn_ids, fn_calls = scan(ident_text, fn.start, fn.end, wt)
            ids = names(fn_ids)
            functions.append(
                HostFunction(
                    name=fn.name,
                    path=self.path,
                    span=span,
                    kind="macro",
                    via_macro=inv.macro,
                    invocation=span,
                    is_static=fn.is_static,
                    calls=names(fn_calls) - _NOT_CALLS,
                    identifiers=ids,
                    markers=ids & self.markers,
                )
            )
        registrations = [
            StubRegistration(
                stub=_unqualified(m.group(2)),
                function=_unqualified(m.group(3)),
                path=self.path,
                span=span,
                macro=m.group(1).decode(),
                mps_only=m.group(1) == b"REGISTER_MPS_DISPATCH",
                via_macro=inv.macro,
            )
            for m in matches_at(_REGISTER, ecode, _REGISTER_WORDS)
            if _word_start(ecode, m.start())
        ]
        kcalls = _kernel_calls(unit, lambda s, e: span) if launches else []
        sites = [HostSite(k, self.path, span, f, d) for k, s, e, f, d in find_sites(unit)]
        return functions, registrations, kcalls, sites

    # ---------------------------------------------------------------- misc
    def registration(self, m: re.Match[bytes]) -> StubRegistration:
        return StubRegistration(
            stub=_unqualified(m.group(2)),
            function=_unqualified(m.group(3)),
            path=self.path,
            span=self.span(m.start(), m.end()),
            macro=m.group(1).decode(),
            mps_only=m.group(1) == b"REGISTER_MPS_DISPATCH",
        )

    def includes(self, ident_code: bytearray) -> list[NativeInclude]:
        """Native-header includes; blanks every #include line in ident_code."""
        sc = self.sc
        code, data = sc.code, sc.data
        found = []
        for ds, de in sc.directives:
            m = _INCLUDE.match(code, ds, de)
            if not m:
                continue
            ident_code[ds:de] = blank(code[ds:de])
            if data.find(b"_native.h", m.start(1), m.end(1)) < 0:
                continue  # _NATIVE_H cannot match
            header = data[m.start(1) : m.end(1)].decode("utf-8", "replace").strip()
            nm = _NATIVE_H.fullmatch(header)
            if nm:
                end = de
                while end > ds and data[end - 1 : end] in (b"\r", b" ", b"\t"):
                    end -= 1
                found.append(NativeInclude(op=nm.group(1), header=header, path=self.path, span=self.span(ds, end)))
        return found

    def inline_metal(self) -> list[InlineMetal]:
        sc = self.sc
        found = []
        for rs in sc.raw_strings:
            if sc.in_directive(rs.start):
                continue
            before = sc.code[max(0, rs.start - 200) : rs.start]
            m = _VAR_BEFORE.search(before)
            var = None
            if m:
                var = (m.group(1) or m.group(2)).decode("latin-1")
                if var in _NOT_VARIABLES:
                    var = None
            text = sc.data[rs.content_start : rs.content_end].decode("utf-8", "replace")
            found.append(InlineMetal(self.path, self.span(rs.content_start, rs.content_end), text, var))
        return found

    def top_error(self, node) -> None:
        """Report unparsed top-level code long enough to hide a definition."""
        if node.end_point[0] - node.start_point[0] < 3 or b"{" not in node.text:
            return
        self.errors.append(
            ParseError(
                self.path,
                node.start_point[0] + 1,
                node.start_point[1] + 1,
                f"could not parse lines {node.start_point[0] + 1}-{node.end_point[0] + 1}; "
                "definitions there may be missed",
                partial=True,
            )
        )


def _word_start(code: bytes, i: int) -> bool:
    if i == 0:
        return True
    b = code[i - 1]
    return not (b == 95 or 48 <= b <= 57 or 65 <= b <= 90 or 97 <= b <= 122)


def _unqualified(name: bytes) -> str:
    return name.decode("latin-1").rsplit("::", 1)[-1]


_DRY_RUNS: dict[tuple[str, tuple[str, ...]], bool] = {}


def _dry_run(mac: Macro) -> bool:
    """Does the macro body (parameters left as their names) define a function or register a stub?"""
    key = (mac.text, mac.params or ())
    got = _DRY_RUNS.get(key)
    if got is None:
        # every body parsed blank (lean_bodies): whether there are definitions is all that is asked
        unit = Unit(SourceFile(expand(mac, tuple(p.encode() for p in key[1]))), keep=_no_nodes)
        code = unit.sc.code
        got = _DRY_RUNS[key] = bool(unit.functions) or any(
            _word_start(code, m.start()) for m in matches_at(_REGISTER, code, _REGISTER_WORDS)
        )
    return got


def _no_nodes(start: int, end: int) -> bool:
    return False


def _calls_any(mac: Macro, names) -> bool:
    body = mac.body
    return any(
        t.kind == "id" and t.text in names and k + 1 < len(body) and body[k + 1].text == "(" for k, t in enumerate(body)
    )


def _generators(macros: dict[str, Macro]) -> dict[str, Macro]:
    """File-local macros whose invocations define functions or register stubs."""
    found = {n: m for n, m in macros.items() if _dry_run(m)}
    changed = True
    while changed:  # macros that invoke a generator are generators too
        changed = False
        for n, m in macros.items():
            if n not in found and _calls_any(m, found):
                found[n] = m
                changed = True
    return found


@lru_cache(maxsize=1)
def _kernel_call_pattern() -> re.Pattern[bytes]:
    names = "|".join(re.escape(n) for n in kernel_launch_helpers())
    return re.compile(rb"(" + names.encode() + rb")[ \t]*\(")


def _launches(code: bytes):
    """Where a launch helper is called (``within``): false if nowhere, and then no kernel call is read."""
    return within(code, _helper_words(), _CALL_PAREN)


@lru_cache(maxsize=1)
def _helper_words() -> tuple[bytes, ...]:
    return tuple(n.encode() for n in kernel_launch_helpers())


def _keep(code: bytes, launches=None):
    """Function bodies the parser must see: kernel launches and host sites are read from their nodes."""
    helpers = _launches(code) if launches is None else launches
    sites = needs_nodes(code)
    if not helpers:  # no launch anywhere: the sites alone decide
        return sites
    return lambda start, end: helpers(start, end) or sites(start, end)


def _kernel_calls(unit: Unit, place) -> list[KernelCall]:
    sc = unit.sc
    code = sc.code
    found: list[KernelCall] = []
    for m in _kernel_call_pattern().finditer(code):
        if not _word_start(code, m.start()) or sc.in_directive(m.start()):
            continue
        node = unit.root.named_descendant_for_byte_range(m.start(1), m.end(1))
        if node is None or node.type not in ("identifier", "field_identifier"):
            continue
        fn_part = node
        parent = node.parent
        method = False
        if parent is not None and parent.type == "field_expression":
            method = True
            fn_part = parent
        elif parent is not None and parent.type == "qualified_identifier":
            fn_part = parent
        call = fn_part.parent
        if call is None or call.type != "call_expression" or call.child_by_field_name("function") != fn_part:
            continue
        args_node = call.child_by_field_name("arguments")
        args = [a for a in args_node.named_children if a.type != "comment"] if args_node is not None else []
        candidates = args[1:2] if method else args
        name = ""
        for a in candidates:
            if a.type == "string_literal":
                name = _string_value(a)
                break
        enclosing = unit.enclosing(m.start())
        first = args[0].text.decode("latin-1") if args else ""
        # lib.exec_*_kernel(iter, ...) and a tree's free launch helper (binary_mps_impl(iter, ...))
        shared = (
            (method or not m.group(1).startswith(b"exec_"))
            and bool(first)
            and (
                "iter" in first.lower()
                or (
                    enclosing is not None
                    and re.search(
                        _ITER_PARAM.format(re.escape(first)),
                        sc.data[enclosing.start : enclosing.body_start].decode("latin-1"),
                    )
                    is not None
                )
            )
        )
        span = place(call.start_byte, call.end_byte)
        found.append(
            KernelCall(
                helper=m.group(1).decode(),
                name=name,
                path=span.path,
                span=span,
                function=enclosing.name if enclosing else None,
                shared_library=shared,
            )
        )
    return found


def _string_value(node) -> str:
    parts = [
        c.text.decode("utf-8", "replace")
        for c in node.named_children
        if c.type in ("string_content", "escape_sequence")
    ]
    return "".join(parts)

"""Token-level pre-pass: preprocessed MSL -> C++ that clang accepts.

Works on the token stream of `clang -E` output (lexer.py), never on raw text:
- records kernels (definitions with their [[buffer]]/position attributes,
  explicit instantiations with [[host_name]]) and strips MSL attributes;
- `T(a, b)` functional casts on vector/half/bfloat/template-parameter types
  -> `__msl_ctor<T>(a, b)`; `static_cast<` -> value-converting `__msl_cast<`;
- unsuffixed floating literals get `f` (Metal has no double), `h` -> `f16`;
- `threadgroup` objects -> `static thread_local` (one per emulated group);
- names unsupported Metal features.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import MetalCompileError, UnsupportedMetalFeature
from .lexer import IDENT, NUMBER, PUNCT, STRING, Token, is_float_literal, render, tokenize

VECTOR_TYPES = frozenset(
    f"{s}{n}"
    for s in ("float", "half", "bfloat", "int", "uint", "short", "ushort", "char", "uchar", "long", "ulong", "bool")
    for n in (2, 3, 4)
)
CTOR_TYPES = VECTOR_TYPES | {"half", "bfloat"}

POSITION_ATTRS = {
    "thread_position_in_grid": "__t.tpig",
    "thread_position_in_threadgroup": "__t.lid",
    "threadgroup_position_in_grid": "__t.tgpig",
    "threads_per_threadgroup": "__t.tptg",
    "threadgroups_per_grid": "__t.tgpg",
    "threads_per_grid": "__t.tpg",
    "grid_size": "__t.tpg",
    "dispatch_threads_per_threadgroup": "__t.dtptg",
    "thread_index_in_threadgroup": "__t.tiitg",
    "thread_index_in_simdgroup": "__t.lane",
    "simdgroup_index_in_threadgroup": "__t.sgitg",
    "simdgroups_per_threadgroup": "__t.sgptg",
    "dispatch_simdgroups_per_threadgroup": "__t.sgptg",
    "threads_per_simdgroup": "32u",
    "thread_execution_width": "32u",
    "grid_origin": "uint3{0u, 0u, 0u}",
    "thread_index_in_quadgroup": "(__t.tiitg & 3u)",
    "quadgroup_index_in_threadgroup": "(__t.tiitg >> 2)",
}
IGNORED_ATTRS = {
    "host_name",
    "buffer",
    "kernel",
    "max_total_threads_per_threadgroup",
    "visible",
    "user",
    "early_fragment_tests",
}
TG_ATTRS = ("threadgroup", "__msl_threadgroup")  # [[threadgroup(N)]] parameters
UNSUPPORTED_ATTRS = {
    "texture": "textures ([[texture(N)]])",
    "sampler": "samplers ([[sampler(N)]])",
    "function_constant": "function constants ([[function_constant]])",
    "stage_in": "[[stage_in]] (vertex/fragment stages)",
    "vertex": "vertex functions",
    "fragment": "fragment functions",
    "mesh": "mesh functions",
    "object": "object functions",
    "imageblock_data": "imageblocks",
    "color": "render target attributes",
    "raster_order_group": "raster order groups",
}
UNSUPPORTED_NAMES = {
    "sampler": "samplers",
    "imageblock": "imageblocks",
    "threadgroup_imageblock": "imageblocks",
    "visible_function_table": "visible function tables",
    "intersection_function_table": "ray tracing",
    "acceleration_structure": "ray tracing",
    "mesh_grid_properties": "mesh shaders",
}
UNSUPPORTED_PREFIXES = (
    ("texture", "textures"),
    ("depth2d", "depth textures"),
    ("depthcube", "depth textures"),
    ("quad_", "quad-group functions"),
)
STD_ATTR_NAMES = {"maybe_unused", "nodiscard", "fallthrough", "noreturn", "deprecated", "likely", "unlikely"}
SYNC_NAMES = ("simd_", "simdgroup_barrier", "threadgroup_barrier", "simdgroup_load", "simdgroup_store")


@dataclass
class Param:
    tokens: list[Token]
    attr: tuple[str, str] | None = None  # ("buffer", "3") / ("pos", name)

    @property
    def text(self) -> str:
        return " ".join(t.text for t in self.tokens)


@dataclass
class Kernel:
    host_name: str
    callee: str
    params: list[Param]
    origin: Token
    body_names: set[str] = field(default_factory=set)
    uses_sync: bool = False
    slots: dict[int, int] = field(default_factory=dict)  # buffer index -> param index
    split: bool = False  # `callee` has row-uniform copies `<name>__msl_cond` / `<name>__msl_fast` (see _split)
    split_name: str = ""


@dataclass
class PrepassResult:
    text: str
    kernels: list[Kernel]
    files: list[str]


def _match(tokens: list[Token], i: int, open_: str, close: str) -> int:
    """Index of the token closing tokens[i] (an `open_`)."""
    depth = 0
    for j in range(i, len(tokens)):
        t = tokens[j].text
        if t == open_ and tokens[j].kind == PUNCT:
            depth += 1
        elif t == close and tokens[j].kind == PUNCT:
            depth -= 1
            if depth == 0:
                return j
    raise MetalCompileError(f"{tokens[i].file}:{tokens[i].line}: unbalanced '{open_}'")


def _match_angle(tokens: list[Token], i: int) -> int:
    """Closing `>` of a template argument list opened at tokens[i] (`<`)."""
    depth, paren = 0, 0
    for j in range(i, len(tokens)):
        t = tokens[j]
        if t.kind != PUNCT:
            continue
        if t.text in "([{":
            paren += 1
        elif t.text in ")]}":
            paren -= 1
        elif paren == 0 and t.text == "<":
            depth += 1
        elif paren == 0 and t.text == ">":
            depth -= 1
            if depth == 0:
                return j
        elif paren == 0 and t.text == ";":
            break
    raise MetalCompileError(f"{tokens[i].file}:{tokens[i].line}: unbalanced '<'")


def _is_attr_start(tokens: list[Token], i: int) -> bool:
    return (
        i + 1 < len(tokens)
        and tokens[i].kind == PUNCT
        and tokens[i].text == "["
        and tokens[i + 1].kind == PUNCT
        and tokens[i + 1].text == "["
    )


def _parse_attr(tokens: list[Token], i: int) -> tuple[int, list[tuple[str, list[Token], Token]]]:
    """Attribute block at i -> (index after it, [(name, arg tokens, name token)])."""
    end = _match(tokens, i, "[", "]")
    inner = tokens[i + 2 : end - 1]
    items: list[tuple[str, list[Token], Token]] = []
    k = 0
    while k < len(inner):
        name_tok = inner[k]
        k += 1
        while k + 1 < len(inner) and inner[k].text == "::":  # e.g. gnu::always_inline
            name_tok = inner[k + 1]
            k += 2
        args: list[Token] = []
        if k < len(inner) and inner[k].text == "(":
            close = _match(inner, k, "(", ")")
            args = inner[k + 1 : close]
            k = close + 1
        items.append((name_tok.text, args, name_tok))
        if k < len(inner) and inner[k].text == ",":
            k += 1
    return end + 1, items


def _is_msl_attr(items) -> bool:
    return all(name not in STD_ATTR_NAMES and name not in ("gnu", "clang") for name, _, _ in items)


def check_unsupported(tokens: list[Token]) -> None:
    for t in tokens:
        if t.kind != IDENT:
            continue
        feature = UNSUPPORTED_NAMES.get(t.text)
        if feature is None:
            for prefix, what in UNSUPPORTED_PREFIXES:
                if t.text.startswith(prefix) and len(t.text) > len(prefix):
                    feature = what
                    break
        if feature is not None:
            raise UnsupportedMetalFeature(f"{feature} ('{t.text}')", t.file, t.line, t.col)


def _split_params(tokens: list[Token]) -> list[list[Token]]:
    params, cur, depth = [], [], 0
    for t in tokens:
        if t.kind == PUNCT and t.text in "(<[{":
            depth += 1
        elif t.kind == PUNCT and t.text in ")>]}":
            depth -= 1
        if depth == 0 and t.kind == PUNCT and t.text == ",":
            params.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        params.append(cur)
    return [p for p in params if not (len(p) == 1 and p[0].text == "void")]


def _parse_params(tokens: list[Token]) -> list[Param]:
    out = []
    for ptoks in _split_params(tokens):
        attr = None
        kept: list[Token] = []
        k = 0
        while k < len(ptoks):
            if _is_attr_start(ptoks, k):
                k2, items = _parse_attr(ptoks, k)
                for name, args, tok in items:
                    if name in UNSUPPORTED_ATTRS:
                        raise UnsupportedMetalFeature(UNSUPPORTED_ATTRS[name], tok.file, tok.line, tok.col)
                    if name == "buffer":
                        attr = ("buffer", "".join(a.text for a in args))
                    elif name in TG_ATTRS:
                        attr = ("tgmem", "".join(a.text for a in args))
                    elif name in POSITION_ATTRS:
                        attr = ("pos", name)
                k = k2
                continue
            if ptoks[k].text != "__msl_threadgroup":
                kept.append(ptoks[k])
            k += 1
        out.append(Param(kept, attr))
    return out


class _Scanner:
    """One pass over the tokens: kernels, named bodies, alias templates."""

    def __init__(self, tokens: list[Token]):
        self.tokens = tokens
        self.defs: dict[tuple[str, int], list[Param]] = {}
        self.def_bodies: dict[tuple[str, int], set[str]] = {}
        self.plain_defs: list[tuple[str, list[Param], Token, set[str]]] = []
        self.insts: list[tuple[str, list[Token], list[Param], Token]] = []
        self.bodies: dict[str, set[str]] = {}
        self.type_templates: set[str] = set()
        self.def_count: dict[str, int] = {}  # kernel definitions per name
        self.splits: dict[str, tuple[int, list[Token]]] = {}  # name -> (insert after index, copies)

    def run(self) -> None:
        toks = self.tokens
        ns: list[str | None] = []  # per open brace: namespace name or None
        i, n = 0, len(toks)
        while i < n:
            t = toks[i]
            if t.kind == IDENT and t.text == "namespace" and i + 1 < n:
                j = i + 1
                parts = []
                while j < n and toks[j].text != "{" and toks[j].text != ";" and toks[j].text != "=":
                    if toks[j].kind == IDENT:
                        parts.append(toks[j].text)
                    j += 1
                if j < n and toks[j].text == "{":
                    ns.append("::".join(parts) or "(anonymous)")
                    i = j + 1
                    continue
            elif t.kind == IDENT and t.text == "template" and i + 1 < n and toks[i + 1].text == "<":
                close = _match_angle(toks, i + 1)
                k = close + 1
                if k + 1 < n and toks[k].text == "using" and toks[k + 1].kind == IDENT:
                    self.type_templates.add(toks[k + 1].text)
                elif k + 1 < n and toks[k].text in ("struct", "class") and toks[k + 1].kind == IDENT:
                    self.type_templates.add(toks[k + 1].text)
            elif t.kind == IDENT and t.text == "__msl_kernel":
                self._kernel(i, [x for x in ns if x and x != "(anonymous)"])
            elif t.kind == PUNCT and t.text == "{":
                name = self._body_name(i)
                if name:
                    end = _match(toks, i, "{", "}")
                    self.bodies.setdefault(name, set()).update(x.text for x in toks[i + 1 : end] if x.kind == IDENT)
                ns.append(None)
            elif t.kind == PUNCT and t.text == "}":
                if ns:
                    ns.pop()
            i += 1

    def _body_name(self, i: int) -> str | None:
        toks = self.tokens
        j = i - 1
        while j >= 0 and toks[j].kind == IDENT and toks[j].text in ("const", "noexcept", "override", "final"):
            j -= 1
        if j >= 0 and toks[j].text == ")":
            j = _open_before(toks, j, "(", ")")
            if (
                j > 0
                and toks[j - 1].kind == IDENT
                and toks[j - 1].text not in ("if", "for", "while", "switch", "catch")
            ):
                return toks[j - 1].text
            if j > 1 and toks[j - 1].text == ")" and toks[j - 2].text == "(":
                return "operator()"
            return None
        # struct NAME [: bases] {
        k = i - 1
        while k >= 0 and i - k < 40 and toks[k].text not in (";", "{", "}"):
            if toks[k].text in ("struct", "class", "union") and k + 1 < i and toks[k + 1].kind == IDENT:
                return toks[k + 1].text
            k -= 1
        return None

    def _kernel(self, k: int, ns: list[str]) -> None:
        toks = self.tokens
        # explicit instantiation: `template [[host_name(..)]] __msl_kernel ...`
        host = None
        j = k - 1
        if j >= 0 and toks[j].text == "void":  # `void kernel f(...)` spelling
            j -= 1
        while j >= 0 and toks[j].text == "]":
            start = j
            depth = 0
            while start >= 0:
                if toks[start].text == "]":
                    depth += 1
                elif toks[start].text == "[":
                    depth -= 1
                    if depth == 0:
                        break
                start -= 1
            _, items = _parse_attr(toks, start)
            for name, args, _ in items:
                if name == "host_name":
                    host = "".join(a.text[1:-1] for a in args if a.kind == STRING)
            j = start - 1
        is_inst = j >= 0 and toks[j].text == "template"
        i = k + 1
        while i < len(toks) and _is_attr_start(toks, i):
            i, _ = _parse_attr(toks, i)
        if i < len(toks) and toks[i].text == "void":
            i += 1
        callee: list[Token] = []
        while i < len(toks) and toks[i].text != "(":
            if toks[i].text == "<":
                close = _match_angle(toks, i)
                callee.extend(toks[i : close + 1])
                i = close + 1
                continue
            if _is_attr_start(toks, i):
                i, _ = _parse_attr(toks, i)
                continue
            callee.append(toks[i])
            i += 1
        if not callee or i >= len(toks):
            raise MetalCompileError(f"{toks[k].file}:{toks[k].line}: cannot parse kernel declaration")
        close = _match(toks, i, "(", ")")
        params = _parse_params(toks[i + 1 : close])
        after = close + 1
        while after < len(toks) and _is_attr_start(toks, after):
            after, items = _parse_attr(toks, after)
            for name, args, _ in items:
                if name == "host_name":
                    host = "".join(a.text[1:-1] for a in args if a.kind == STRING)
        name_tok = [t for t in callee if t.kind == IDENT][-1] if not is_inst else None
        if is_inst:
            base = [t.text for t in callee]
            if "<" in base:
                base = base[: base.index("<")]
            short = base[-1]
            self.insts.append((host or short, callee, params, toks[k]))
            return
        is_def = after < len(toks) and toks[after].text == "{"
        if not is_def:
            return
        end = _match(toks, after, "{", "}")
        body = {t.text for t in toks[after + 1 : end] if t.kind == IDENT}
        key = (name_tok.text, len(params))
        self.def_count[name_tok.text] = self.def_count.get(name_tok.text, 0) + 1
        if len(callee) == 1:
            copies = _split(toks, self._decl_start(k), toks.index(name_tok, k), after, end)
            if copies:
                self.splits[name_tok.text] = (end, copies)
        has_attrs = any(p.attr for p in params)
        if self._is_template(k):
            if has_attrs or key not in self.defs:
                self.defs[key] = params
                self.def_bodies[key] = body
        else:
            qual = "::".join(ns + ["".join(t.text for t in callee)])
            self.plain_defs.append((host or name_tok.text, params, toks[k], body, qual))

    def _decl_start(self, k: int) -> int:
        """First token of the kernel definition at tokens[k] (`template` or its specifiers)."""
        toks = self.tokens
        j = k - 1
        while j >= 0 and toks[j].kind == IDENT and toks[j].text in ("static", "inline", "void"):
            j -= 1
        if self._is_template(k):
            opened = _open_before(toks, j, "<", ">")
            return opened - 1 if opened >= 0 else 0
        return j + 1

    def _is_template(self, k: int) -> bool:
        toks = self.tokens
        j = k - 1
        while j >= 0 and toks[j].kind == IDENT and toks[j].text in ("static", "inline", "void"):
            j -= 1
        if j < 0 or toks[j].text != ">":
            return False
        opened = _open_before(toks, j, "<", ">")
        return opened > 0 and toks[opened - 1].text == "template"


def _open_before(toks, j: int, open_: str, close: str) -> int:
    """The index of the ``open_`` token matching the ``close`` at ``toks[j]``, or -1."""
    depth = 0
    while j >= 0:
        if toks[j].text == close:
            depth += 1
        elif toks[j].text == open_:
            depth -= 1
            if depth == 0:
                return j
        j -= 1
    return -1


def _uses_sync(start: set[str], bodies: dict[str, set[str]]) -> bool:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name.startswith(SYNC_NAMES):
            return True
        todo.extend(bodies.get(name, ()))
    return False


def _assign_slots(kernel: Kernel) -> None:
    used = {int(p.attr[1]) for p in kernel.params if p.attr and p.attr[0] == "buffer" and p.attr[1].isdigit()}
    nxt = 0
    for idx, p in enumerate(kernel.params):
        if p.attr and p.attr[0] == "buffer":
            if not p.attr[1].isdigit():
                raise MetalCompileError(
                    f"{kernel.origin.file}:{kernel.origin.line}: [[buffer({p.attr[1]})]] must be an integer literal"
                )
            kernel.slots[int(p.attr[1])] = idx
        elif p.attr is None:
            while nxt in used:
                nxt += 1
            p.attr = ("buffer", str(nxt))
            used.add(nxt)
            kernel.slots[nxt] = idx


def find_kernels(tokens: list[Token]) -> tuple[list[Kernel], set[str], dict[str, tuple[int, list[Token]]]]:
    sc = _Scanner(tokens)
    sc.run()
    kernels: list[Kernel] = []
    for host, callee, params, origin in sc.insts:
        base = [t.text for t in callee]
        short = base[: base.index("<")][-1] if "<" in base else base[-1]
        key = (short, len(params))
        defn = sc.defs.get(key)
        if defn is None:
            raise MetalCompileError(
                f"{origin.file}:{origin.line}: error: no kernel template '{short}' with {len(params)} "
                f"parameters for host_name '{host}'"
            )
        for p, d in zip(params, defn):
            p.attr = d.attr
        targs = {t.text for t in callee if t.kind == IDENT}
        k = Kernel(host, " ".join(base), params, origin, sc.def_bodies.get(key, set()) | targs)
        k.split_name = short
        kernels.append(k)
    for host, params, origin, body, qual in sc.plain_defs:
        k = Kernel(host, "::" + qual if not qual.startswith("::") else qual, params, origin, body)
        k.split_name = qual.rsplit("::", 1)[-1]
        kernels.append(k)
    seen: dict[str, Kernel] = {}
    for k in kernels:
        if k.host_name in seen:
            raise MetalCompileError(f"{k.origin.file}:{k.origin.line}: error: duplicate kernel name '{k.host_name}'")
        seen[k.host_name] = k
        _assign_slots(k)
        k.uses_sync = _uses_sync(k.body_names, sc.bodies)
        k.split = (
            k.split_name in sc.splits
            and sc.def_count.get(k.split_name) == 1  # one definition: its copies resolve as the kernel does
            and not k.uses_sync
            and not any(p.attr and p.attr[0] == "tgmem" for p in k.params)
        )
    used = {k.split_name for k in kernels if k.split}
    return kernels, sc.type_templates, {n: sc.splits[n] for n in used}


# Row-uniform fast path. A kernel `P; if (C) { A } else { B }` whose else branch has a loop
# (torch's ILP kernels: the tail loop) cannot be vectorised across threads: clang vectorises
# only inside one thread. The pre-pass copies it as `NAME__msl_cond` (`P; return C;`) and
# `NAME__msl_fast` (`P; { A }`); the runtime evaluates C for every thread of a row first and,
# when it holds for all, runs `P; A` for each, a body clang vectorises across threads.
# A valid GPU schedule, provided P and C change no memory another thread (or A) reads:
# they may only declare locals, read, compute and call casts/constructors of Metal types.
SPLIT_IMPURE_WORDS = frozenset(
    "return goto asm __asm__ throw new delete static thread_local extern volatile __msl_threadgroup "
    "co_await co_yield co_return if for while do switch break continue case default using typedef".split()
)
SPLIT_IMPURE_OPS = frozenset("= ++ -- += -= *= /= %= &= |= ^= <<= >>= { } ->* .* ; #".split())
SPLIT_PURE_CALLS = (
    CTOR_TYPES
    | {"float", "int", "uint", "short", "ushort", "char", "uchar", "long", "ulong", "bool", "size_t"}
    | {"static_cast", "const_cast", "reinterpret_cast", "as_type", "sizeof", "alignof", "decltype"}
)
SPLIT_SUFFIXES = ("__msl_cond", "__msl_fast")


def split_name(callee: str, suffix: str = "") -> str:
    """`ns :: f < T >` -> `ns :: f<suffix> < T >`."""
    head, sep, tail = callee.partition(" <")
    return head + suffix + sep + tail


def _pure_expr(toks: list[Token]) -> bool:
    """No stores, no increments, no calls except casts and constructors of Metal types."""
    for i, t in enumerate(toks):
        if t.kind not in (IDENT, NUMBER, PUNCT) and t.kind != "char":
            return False
        if (t.kind == IDENT and t.text in SPLIT_IMPURE_WORDS) or (t.kind == PUNCT and t.text in SPLIT_IMPURE_OPS):
            return False
        if t.text == "(" and t.kind == PUNCT and i > 0:
            j = i - 1
            if toks[j].text == ">" and toks[j].kind == PUNCT:  # `name<args>(`
                depth = 0
                while j >= 0:
                    depth += toks[j].text == ">"
                    depth -= toks[j].text == "<"
                    if depth == 0:
                        break
                    j -= 1
                j -= 1
                if j < 0:
                    return False
            if toks[j].kind == IDENT and toks[j].text not in SPLIT_PURE_CALLS:
                return False
            if toks[j].text in (")", "]"):  # a call through an expression
                return False
    return True


def _pure_decl(toks: list[Token]) -> bool:
    """`TYPE NAME;` or `TYPE NAME = EXPR;` with a pure EXPR."""
    eq = next((i for i, t in enumerate(toks) if t.text == "=" and t.kind == PUNCT), len(toks))
    lhs = toks[:eq]
    if len(lhs) < 2 or lhs[0].kind != IDENT or lhs[-1].kind != IDENT:
        return False
    if lhs[-2].kind != IDENT and lhs[-2].text not in (">", "*", "&"):
        return False
    for t in lhs:
        if t.kind == IDENT and t.text in SPLIT_IMPURE_WORDS:
            return False
        if t.kind not in (IDENT, NUMBER) and not (t.kind == PUNCT and t.text in ("::", "<", ">", ",", "*", "&")):
            return False
    return eq == len(toks) or _pure_expr(toks[eq + 1 :])


def _split(toks: list[Token], start: int, name: int, open_: int, close: int) -> list[Token] | None:
    """The `__msl_cond` and `__msl_fast` copies of the kernel defined by toks[start:close + 1]
    (name at `name`, body braces at `open_`/`close`), or None when its body is not
    `P; if (C) { A } else { ..loop.. }` with a pure P and C."""
    body = toks[open_ + 1 : close]
    if any(t.text in ("__msl_threadgroup", "static", "thread_local") for t in toks[start:close]):
        return None
    i = 0
    while i < len(body) and body[i].text != "if":
        j, depth = i, 0
        while j < len(body) and not (depth == 0 and body[j].text == ";"):
            if body[j].text in ("{", "}") or body[j].kind not in (IDENT, NUMBER, PUNCT):
                return None
            depth += body[j].text in ("(", "[")
            depth -= body[j].text in (")", "]")
            j += 1
        stmt = body[i:j]
        alias = len(stmt) > 3 and stmt[0].text == "using" and stmt[1].kind == IDENT and stmt[2].text == "="
        if j == len(body) or not (_pure_expr(stmt[3:]) if alias else _pure_decl(stmt)):
            return None
        i = j + 1
    if i + 1 >= len(body) or body[i + 1].text != "(":
        return None
    c_end = _match(body, i + 1, "(", ")")
    if c_end + 1 >= len(body) or body[c_end + 1].text != "{" or not _pure_expr(body[i + 2 : c_end]):
        return None
    a_end = _match(body, c_end + 1, "{", "}")
    if a_end + 2 >= len(body) or body[a_end + 1].text != "else" or body[a_end + 2].text != "{":
        return None
    if _match(body, a_end + 2, "{", "}") != len(body) - 1:
        return None
    if not any(t.kind == IDENT and t.text in ("for", "while", "do") for t in body[a_end + 3 :]):
        return None
    head = toks[start:open_]
    voids = [h for h in range(name - start) if head[h].text == "void" and head[h].kind == IDENT]
    if len(voids) != 1:
        return None
    prologue = body[:i]
    out: list[Token] = []
    for suffix in SPLIT_SUFFIXES:
        for h, t in enumerate(head):
            if t.text == "__msl_kernel":
                continue
            if h == name - start:
                t = Token(IDENT, t.text + suffix, t.file, t.line, t.col)
            elif h == voids[0] and suffix == "__msl_cond":
                t = Token(IDENT, "bool", t.file, t.line, t.col)
            out.append(t)
        out.append(toks[open_])
        out.extend(prologue)
        if suffix == "__msl_cond":
            at = body[i]
            out.append(Token(IDENT, "return", at.file, at.line, at.col))
            out.extend(body[i + 1 : c_end + 1])
            out.append(Token(PUNCT, ";", at.file, at.line, at.col))
        else:
            out.extend(body[c_end + 1 : a_end + 1])
        out.append(toks[close])
    return out


def rewrite(tokens: list[Token], type_templates: set[str]) -> list[Token]:
    out: list[Token] = []
    scopes: list[list] = []  # [names, start_depth, body_opened]
    depth = paren = 0
    toks = tokens
    n = len(toks)
    i = 0

    def sub(tok: Token, text: str, kind: str = IDENT) -> Token:
        return Token(kind, text, tok.file, tok.line, tok.col)

    def type_names() -> set[str]:
        s: set[str] = set()
        for sc in scopes:
            s |= sc[0]
        return s

    while i < n:
        t = toks[i]
        text = t.text
        if t.kind == PUNCT:
            if _is_attr_start(toks, i):
                end, items = _parse_attr(toks, i)
                if not _is_msl_attr(items):
                    out.extend(toks[i:end])
                i = end
                continue
            if text == "{":
                depth += 1
                if scopes and not scopes[-1][2] and depth - 1 == scopes[-1][1]:
                    scopes[-1][2] = True
            elif text == "}":
                depth -= 1
                while scopes and scopes[-1][2] and depth == scopes[-1][1]:
                    scopes.pop()
            elif text == "(":
                paren += 1
            elif text == ")":
                paren -= 1
            elif text == ";" and paren == 0:
                while scopes and not scopes[-1][2] and depth == scopes[-1][1]:
                    scopes.pop()
            out.append(t)
            i += 1
            continue
        if t.kind == NUMBER:
            if is_float_literal(text):
                low = text.lower()
                if low.endswith("h"):
                    text = text[:-1] + "f16"
                elif low.endswith("l"):
                    text = text[:-1] + "f"
                elif not low.endswith("f"):
                    text = text + "f"
                t = sub(t, text, NUMBER)
            out.append(t)
            i += 1
            continue
        if t.kind != IDENT:
            out.append(t)
            i += 1
            continue
        nxt = toks[i + 1].text if i + 1 < n else ""
        prev = out[-1].text if out else ""
        if text == "template" and nxt == "<":
            close = _match_angle(toks, i + 1)
            names = set()
            for k in range(i + 2, close):
                if (
                    toks[k].text in ("typename", "class")
                    and toks[k + 1].kind == IDENT
                    and toks[k + 2].text in (",", ">", "=", "...")
                ):
                    names.add(toks[k + 1].text)
            scopes.append([names, depth, False])
        elif text == "using" and scopes and depth > scopes[-1][1] and i + 2 < n and toks[i + 2].text == "=":
            scopes[-1][0].add(nxt)
        elif text == "static_cast":
            out.append(sub(t, "__msl_cast"))
            i += 1
            continue
        elif text == "__msl_kernel":
            i += 1
            continue
        elif text == "const" and prev == "const":
            i += 1
            continue
        elif text == "__msl_threadgroup":
            i += 1
            if prev in ("{", "}", ";", ":") and not _is_pointer_decl(toks, i):
                out.append(sub(t, "static"))
                out.append(sub(t, "thread_local"))
            continue
        if (
            nxt == "("
            and prev not in (".", "->", "operator", "~", "::", "struct", "class")
            and (text in CTOR_TYPES or text in type_names())
            and not _is_declarator(toks, i + 1)
        ):
            out.append(sub(t, "__msl_ctor"))
            out.append(sub(t, "<", PUNCT))
            out.append(t)
            out.append(sub(t, ">", PUNCT))
            i += 1
            continue
        if nxt == "<" and text in type_templates and prev not in (".", "->", "template", "using", "struct", "class"):
            close = _match_angle(toks, i + 1)
            if close + 1 < n and toks[close + 1].text == "(" and not _is_declarator(toks, close + 1):
                prefix: list[Token] = []
                while len(out) >= 2 and out[-1].text == "::" and out[-2].kind == IDENT:
                    prefix = [out[-2], out[-1]] + prefix
                    del out[-2:]
                if out and out[-1].text == "::":
                    prefix = [out.pop()] + prefix
                inner = rewrite(toks[i : close + 1], type_templates)
                out.append(sub(t, "__msl_ctor"))
                out.append(sub(t, "<", PUNCT))
                out.extend(prefix)
                out.extend(inner)
                out.append(sub(t, ">", PUNCT))
                i = close + 1
                continue
        out.append(t)
        i += 1
    return out


def _is_declarator(toks: list[Token], i: int) -> bool:
    """`T (*name)(` / `T (&name)` after a type: a declaration, not a cast."""
    return (
        i + 3 < len(toks)
        and toks[i].text == "("
        and toks[i + 1].text in ("*", "&")
        and toks[i + 2].kind == IDENT
        and toks[i + 3].text == ")"
    )


def _is_pointer_decl(toks: list[Token], i: int) -> bool:
    depth = 0
    for k in range(i, min(len(toks), i + 64)):
        s = toks[k].text
        if s == "<":
            depth += 1
        elif s == ">":
            depth -= 1
        elif depth <= 0 and s in (";", "=", "[", ",", ")", "(", "{"):
            return False
        elif depth <= 0 and s in ("*", "&"):
            return True
    return False


def prepass(preprocessed: str, main_file: str) -> PrepassResult:
    tokens = tokenize(preprocessed, main_file)
    check_unsupported(tokens)
    # `[[kernel]] void f(...)` is the attribute spelling of `kernel`
    norm: list[Token] = []
    i = 0
    while i < len(tokens):
        if _is_attr_start(tokens, i):
            end, items = _parse_attr(tokens, i)
            if [name for name, _, _ in items] in (["kernel"], ["__msl_kernel"]):
                norm.append(Token(IDENT, "__msl_kernel", tokens[i].file, tokens[i].line, tokens[i].col))
                i = end
                continue
        norm.append(tokens[i])
        i += 1
    kernels, type_templates, splits = find_kernels(norm)
    if splits:  # the copies go right after their kernel's definition, in its namespace
        after = {end: copies for end, copies in splits.values()}
        norm = [x for i, t in enumerate(norm) for x in ([t] + after.get(i, []))]
    out = rewrite(norm, type_templates)
    files = sorted({t.file for t in norm})
    return PrepassResult(render(out), kernels, files)

"""The pre-pass's first stage: find the kernels of a preprocessed MSL file (definitions with their
[[buffer]]/position attributes, explicit instantiations with [[host_name]]), their buffer slots and
whether they synchronise; reject unsupported Metal features."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import MetalCompileError, UnsupportedMetalFeature
from .lexer import IDENT, PUNCT, STRING, Token
from .prepass_common import _match, _match_angle
from .prepass_split import _split

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

"""Function bodies of Metal source, for the kernel review rules (MPS016-MPS021).

Reads the token stream of ``migrate.source.tokens`` (byte offsets kept), finds function
definitions (kernels, helpers, functor members) with their parameters and
``[[attributes]]``, and walks each body into simple statements, each with the
conditions (``if``/``else``, loop, ``switch``) that enclose it.  Macros are not
expanded: a rule judges the code as written.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from migrate.source.tokens import Tok, tokenize
from migrate.source.tokens import match_close as _match_close_scan

CONTROL = frozenset({"if", "for", "while", "switch", "return", "sizeof", "catch", "do", "else", "static_assert"})
ASSIGN_OPS = frozenset({"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"})


_OPENS = {"(": ")", "[": "]", "{": "}"}
_CLOSES = frozenset(_OPENS.values())
_BRACKETS = frozenset(_OPENS) | _CLOSES
# the token list last matched, its length, the closing index of each opener, the indexes of its braces
_PARTNERS: list = [None, 0, None, None]


def _brackets(toks: list[Tok]) -> list:
    """_PARTNERS for ``toks``, made by one pass over its brackets when it holds another list."""
    memo = _PARTNERS
    if memo[0] is not toks or memo[1] != len(toks):
        partners: dict[int, int] = {}
        stack: list[tuple[str, int]] = []
        braces: list[int] = []
        for j, x in [(j, t.text) for j, t in enumerate(toks) if t.kind == "punc" and t.text in _BRACKETS]:
            if x in _OPENS:
                stack.append((_OPENS[x], j))
            elif stack and stack[-1][0] == x:
                partners[stack.pop()[1]] = j
            if x == "{" or x == "}":
                braces.append(j)
        memo[:] = [toks, len(toks), partners, braces]
    return memo


def match_close(toks: list[Tok], i: int) -> int:
    """``tokens.match_close``, answered from one pass over the token list (a body walk asks for
    thousands of brackets of the same list): one stack gives every opener its partner, as a scan
    from that opener would (a closer that does not match the innermost open bracket is skipped)."""
    got = _brackets(toks)[2].get(i)
    if got is None:  # unbalanced, or not an opener of punctuation: the scan decides
        return _match_close_scan(toks, i)
    return got


def lex(text: str, start: int = 0, end: int | None = None) -> list[Tok]:
    """Tokens of ``text[start:end]`` (``text`` decoded latin-1: one char per byte), comments dropped."""
    return tokenize(text, start, end)


def split_top(toks: list[Tok], lo: int, hi: int, sep: str = ",", angles: bool = False) -> list[tuple[int, int]]:
    """``[lo, hi)`` split on ``sep`` outside brackets (and ``<>`` when ``angles``)."""
    parts, depth, s = [], 0, lo
    for j in range(lo, hi):
        t = toks[j]
        if t.kind != "punc":
            continue
        if t.text in "([{" or (angles and t.text == "<"):
            depth += 1
        elif t.text in ")]}" or (angles and t.text == ">"):
            depth -= 1
        elif t.text == sep and depth == 0:
            parts.append((s, j))
            s = j + 1
    parts.append((s, hi))
    return [(a, b) for a, b in parts if a < b]


@dataclass(frozen=True)
class Param:
    name: str
    type: tuple[str, ...]  # type words as written (address space, qualifiers, '*', '&' included)
    attrs: tuple[str, ...]  # identifiers inside [[...]]

    @property
    def pointer(self) -> bool:
        return "*" in self.type

    @property
    def reference(self) -> bool:
        return "&" in self.type

    @property
    def space(self) -> str | None:
        return next((w for w in self.type if w in ("device", "constant", "threadgroup", "thread")), None)


@dataclass
class Function:
    name: str  # "operator()" for a functor's call operator
    struct: str | None  # enclosing struct/class
    namespace: tuple[str, ...]
    is_kernel: bool
    template_params: frozenset[str]
    params: tuple[Param, ...]
    body: tuple[int, int]  # token indices strictly inside the braces
    name_tok: int
    head: int = 0  # token index where the declaration starts (template <...>, return type)
    stmts: list["Stmt"] = field(default_factory=list)


@dataclass(frozen=True)
class Cond:
    kind: str  # if | else | for | while | switch
    lo: int
    hi: int  # token range of the condition expression
    keyword: int  # token index of the keyword


@dataclass(frozen=True)
class Stmt:
    lo: int
    hi: int  # token range, ';' excluded
    conds: tuple[Cond, ...]  # enclosing conditions, outermost first
    role: str = "stmt"  # stmt | for-init | for-step | cond (a condition, as an expression to scan)


def _header_start(toks: list[Tok], i: int, floor: int) -> int:
    j = i - 1
    while j >= floor and not (toks[j].kind == "punc" and toks[j].text in (";", "{", "}")) and toks[j].kind != "dir":
        j -= 1
    return j + 1


def find_functions(toks: list[Tok]) -> list[Function]:
    """Function definitions at file, namespace and struct scope (bodies are not searched for more)."""
    out: list[Function] = []
    scopes: list[tuple[str, str | None]] = []  # (kind, name)
    floor = 0
    braces = _brackets(toks)[3]  # all the loop reads
    p = 0
    while p < len(braces):
        i = braces[p]
        if toks[i].text == "}":
            if scopes:
                scopes.pop()
            floor = i + 1
        else:
            hs = _header_start(toks, i, floor)
            head = toks[hs:i]
            words = [x.text for x in head]
            fn = _function_head(toks, hs, i) if head and "=" not in words else None
            if "namespace" in words:
                k = words.index("namespace")
                scopes.append(("namespace", words[k + 1] if k + 1 < len(words) and head[k + 1].kind == "id" else None))
            elif fn is not None:
                close = match_close(toks, i)
                struct = next((nm for kind, nm in reversed(scopes) if kind == "struct"), None)
                ns = tuple(nm for kind, nm in scopes if kind == "namespace" and nm)
                out.append(Function(fn[0], struct, ns, "kernel" in words, fn[1], fn[2], (i + 1, close), fn[3], hs))
                i = close
                floor = i + 1
            elif ("struct" in words or "class" in words) and "enum" not in words:
                k = words.index("struct" if "struct" in words else "class")
                scopes.append(("struct", words[k + 1] if k + 1 < len(words) else None))
            else:
                i = match_close(toks, i)  # enum, initializer: skip
                floor = i + 1
            if fn is None or "namespace" in words:
                floor = i + 1
        p = bisect_right(braces, i, p + 1)  # the next brace after i (a skipped body's end)
    return out


def _function_head(toks: list[Tok], hs: int, brace: int):
    """(name, template params, params, name token) when ``toks[hs:brace]`` is a function head."""
    j = brace - 1
    while (
        j >= hs
        and toks[j].kind == "id"
        and toks[j].text in ("const", "noexcept", "override", "thread", "constant", "device")
    ):
        j -= 1
    if j < hs or toks[j].text != ")":
        return None
    k = _open_of(toks, hs, j)
    if k <= hs:
        return None
    nt = k - 1
    if toks[nt].text == ")" and nt - 2 >= hs and toks[nt - 1].text == "(" and toks[nt - 2].text == "operator":
        name, nt = "operator()", nt - 2
    elif toks[nt].kind == "id" and toks[nt].text not in CONTROL:
        name = toks[nt].text
    else:
        return None
    tparams: set[str] = set()
    for q in range(hs, nt):
        if toks[q].text in ("typename", "class") and q + 1 < nt and toks[q + 1].kind == "id":
            tparams.add(toks[q + 1].text)
    params = tuple(p for a, b in split_top(toks, k + 1, j, angles=True) if (p := _param(toks, a, b)) is not None)
    return name, frozenset(tparams), params, nt


def _param(toks: list[Tok], a: int, b: int) -> Param | None:
    attrs, words, q = [], [], a
    while q < b:
        t = toks[q]
        if t.text == "[" and q + 1 < b and toks[q + 1].text == "[":
            e = match_close(toks, q)
            attrs += [x.text for x in toks[q + 2 : e - 1] if x.kind == "id"]
            q = e + 1
            continue
        if t.text == "=":
            break  # default argument
        words.append(t.text)
        q += 1
    names = [w for w in words if w.isidentifier()]
    if len(names) < 2 and not (names and words and words[-1] == names[-1] and ("*" in words or "&" in words)):
        return None  # unnamed parameter or "void"
    while words and words[-1] == "]":  # array parameter
        words = words[: words.index("[")] if "[" in words else words[:-1]
    return Param(words[-1], tuple(words[:-1]), tuple(attrs))


# ------------------------------------------------------------ statements
def walk(toks: list[Tok], fn: Function) -> list[Stmt]:
    """The body's simple statements and conditions in source order."""
    out: list[Stmt] = []
    lo, hi = fn.body
    i = lo
    while i < hi:
        i = _stmt(toks, i, hi, (), out)
    fn.stmts = out
    return out


def _paren(toks: list[Tok], i: int, hi: int) -> tuple[int, int, int]:
    """For a keyword at ``i`` followed by ``(...)``: (expr lo, expr hi, index after ')')."""
    if i + 1 < hi and toks[i + 1].text == "(":
        c = match_close(toks, i + 1)
        return i + 2, c, c + 1
    return i + 1, i + 1, i + 1


def _stmt(toks: list[Tok], i: int, hi: int, conds: tuple[Cond, ...], out: list[Stmt]) -> int:
    t = toks[i]
    if t.kind == "dir" or (t.kind == "punc" and t.text == ";"):
        return i + 1
    if t.text == "@autoreleasepool" or (t.text == "@" and i + 1 < hi and toks[i + 1].text == "autoreleasepool"):
        n = 1 if t.text != "@" else 2  # Objective-C++ host code: its block's statements are the function's
        return _stmt(toks, i + n, hi, conds, out) if i + n < hi else hi
    if t.text == "{":
        c = min(match_close(toks, i), hi)
        j = i + 1
        while j < c:
            j = _stmt(toks, j, c, conds, out)
        return c + 1
    if t.kind == "id" and t.text == "if":
        a, b, j = _paren(toks, i, hi)
        if j < hi and toks[j].text == "constexpr":
            a, b, j = _paren(toks, i + 1, hi)
        cond = Cond("if", a, b, i)
        out.append(Stmt(a, b, conds, "cond"))
        j = _stmt(toks, j, hi, conds + (cond,), out) if j < hi else j
        if j < hi and toks[j].text == "else":
            j = _stmt(toks, j + 1, hi, conds + (Cond("else", a, b, j),), out)
        return j
    if t.kind == "id" and t.text in ("while", "switch"):
        a, b, j = _paren(toks, i, hi)
        cond = Cond(t.text, a, b, i)
        out.append(Stmt(a, b, conds, "cond"))
        return _stmt(toks, j, hi, conds + (cond,), out) if j < hi else j
    if t.kind == "id" and t.text == "do":
        body_end = _stmt(toks, i + 1, hi, conds, [])
        if body_end < hi and toks[body_end].text == "while":
            a, b, after = _paren(toks, body_end, hi)
            cond = Cond("while", a, b, body_end)
            out.append(Stmt(a, b, conds, "cond"))
            _stmt(toks, i + 1, hi, conds + (cond,), out)
            return after
        return _stmt(toks, i + 1, hi, conds, out)
    if t.kind == "id" and t.text == "for":
        a, b, j = _paren(toks, i, hi)
        semis = [k for k in range(a, b) if toks[k].text == ";" and _depth0(toks, a, k)]
        init = (a, semis[0]) if semis else (a, b)
        test = (semis[0] + 1, semis[1]) if len(semis) > 1 else (b, b)
        step = (semis[1] + 1, b) if len(semis) > 1 else (b, b)
        cond = Cond("for", test[0], test[1], i)
        if init[0] < init[1]:  # its declarations are the loop's: scoped inside it
            out.append(Stmt(init[0], init[1], conds + (cond,), "for-init"))
        out.append(Stmt(test[0], test[1], conds + (cond,), "cond"))
        if step[0] < step[1]:
            out.append(Stmt(step[0], step[1], conds + (cond,), "for-step"))
        return _stmt(toks, j, hi, conds + (cond,), out) if j < hi else j
    if t.kind == "id" and t.text in ("case", "default"):
        j = i + 1
        while j < hi and toks[j].text != ":":
            j += 1
        return j + 1
    j, depth, start = i, 0, i
    while j < hi:
        x = toks[j]
        if x.kind == "punc":
            if x.text in "([{":
                depth += 1
            elif x.text in ")]}":
                depth -= 1
            elif x.text == ";" and depth == 0:
                break
            elif x.text == "^" and (brace := _block_brace(toks, j, hi)) is not None:
                # an Objective-C block (host code: ``dispatch_sync(q, ^() { ... });``): its body's statements are
                # statements of their own, as a lambda's would be run; the call around it is split around them
                if start < j:
                    out.append(Stmt(start, j, conds))
                close = min(match_close(toks, brace), hi)
                k = brace + 1
                while k < close:
                    k = _stmt(toks, k, close, conds, out)
                j = start = close + 1
                continue
        j += 1
    if start < j or start == i:
        out.append(Stmt(start, j, conds))
    return j + 1


def _block_brace(toks: list[Tok], i: int, hi: int) -> int | None:
    """The ``{`` opening the body of the Objective-C block literal whose ``^`` is at ``i`` (``^{``, ``^(...) {``,
    ``^RetType(...) {``); None when the ``^`` is an exclusive or."""
    k = i + 1
    typed = k < hi and toks[k].kind == "id"
    if typed:  # a return type, one word, then the parameters (``^BOOL(id x) {``; ``a ^ T{1}`` is an exclusive or)
        k += 1
        while k < hi and toks[k].text in ("*", "&"):
            k += 1
    if k < hi and toks[k].text == "(":
        k = match_close(toks, k) + 1
    elif typed:
        return None
    return k if k < hi and toks[k].text == "{" else None


def _first_top_level(toks: list[Tok], a: int, b: int, x: str) -> int | None:
    """The first ``x`` of ``[a, b)`` outside the brackets opened in the range (one scan for what a
    ``_depth0`` check at each ``x`` tells)."""
    depth = 0
    for k in range(a, b):
        t = toks[k].text
        if t == x:
            if depth == 0:
                return k
        elif t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
    return None


def _depth0(toks: list[Tok], a: int, k: int) -> bool:
    depth = 0
    for q in range(a, k):
        if toks[q].text in "([{":
            depth += 1
        elif toks[q].text in ")]}":
            depth -= 1
    return depth == 0


# ------------------------------------------------------------ expressions
@dataclass(frozen=True)
class Assign:
    var: str  # the variable written (base identifier)
    decl: tuple[str, ...] | None  # declared type words when this is a declaration
    lhs: tuple[int, int]
    rhs: tuple[int, int]
    subscripted: bool  # "a[i] = ..." / "*p = ..." / "a.x = ...": an element, not the whole variable


def assignments(toks: list[Tok], st: Stmt) -> list[Assign]:
    """``T a = x, b = y`` / ``a = x`` / ``a += x`` / ``T a;`` in a statement (not inside brackets)."""
    if st.role == "cond":
        return []
    out: list[Assign] = []
    decl_type: tuple[str, ...] | None = None
    for a, b in split_top(toks, st.lo, st.hi, angles=False):
        eq = _first_top_level(toks, a, b, "=")
        lhs_end = eq if eq is not None else b
        if eq is not None and eq > a and toks[eq - 1].text in ASSIGN_OPS and toks[eq - 1].kind == "punc":
            lhs_end = eq - 1
        if lhs_end <= a:
            continue
        base_end = lhs_end
        subscripted = False
        if toks[lhs_end - 1].text == "]":
            subscripted = True
            q = lhs_end - 1
            while q > a and toks[q].text == "]":
                q = _open_of(toks, a, q) - 1
            base_end = q + 1
        if base_end <= a or toks[base_end - 1].kind != "id":
            continue
        var_k = base_end - 1
        if base_end - 2 >= a and toks[base_end - 2].text in (".", "->"):
            subscripted = True
            var_k = next(k for k in range(a, base_end) if toks[k].kind == "id")
        if toks[a].text == "*" or (a < var_k and toks[var_k - 1].text == "*" and var_k - 1 == a):
            subscripted = True
        type_words = (
            tuple([x.text for x in toks[a:var_k]]) if var_k > a and toks[var_k - 1].text not in (".", "->") else None
        )
        if type_words is not None and "return" in type_words:
            continue
        if type_words:
            decl_type = type_words
        elif decl_type is not None and (a, b) != (st.lo, st.hi) and var_k == a:
            type_words = decl_type  # "uint a = x, b = y": b shares the type
        if eq is None and not type_words:
            continue
        out.append(
            Assign(
                toks[var_k].text,
                type_words or None,
                (a, lhs_end),
                (eq + 1, b) if eq is not None else (b, b),
                subscripted and not type_words,
            )
        )
    return out


def _open_of(toks: list[Tok], lo: int, close: int) -> int:
    depth = 0
    for q in range(close, lo - 1, -1):
        if toks[q].text in ")]}":
            depth += 1
        elif toks[q].text in "([{":
            depth -= 1
            if depth == 0:
                return q
    return lo


@dataclass(frozen=True)
class Call:
    name: str
    qualifier: str  # "::metal::", "c10::metal::", "" as written before the name
    at: int  # token index of the name
    args: tuple[tuple[int, int], ...]


def calls(toks: list[Tok], lo: int, hi: int) -> list[Call]:
    out = []
    for k, after in enumerate(toks[lo + 1 : hi], lo):  # a name followed by "(" or "<" may be called
        if after.text != "(" and after.text != "<":
            continue
        t = toks[k]
        if t.kind != "id" or t.text in CONTROL:
            continue
        nxt = k + 1
        if after.text == "<":  # explicit template arguments: f<T>(...)
            depth, q = 0, nxt
            while q < hi:
                depth += toks[q].text == "<"
                depth -= toks[q].text == ">"
                if depth == 0:
                    break
                q += 1
            nxt = q + 1
        if nxt >= hi or toks[nxt].text != "(":
            continue
        if k > lo and toks[k - 1].text in (".", "->"):
            continue  # member call
        q, qual = k, ""
        while q - 2 >= 0 and toks[q - 1].text == "::" and toks[q - 2].kind == "id" and toks[q - 2].text not in CONTROL:
            qual = toks[q - 2].text + "::" + qual
            q -= 2
        if q - 1 >= 0 and toks[q - 1].text == "::":
            qual = "::" + qual
        c = match_close(toks, nxt)
        out.append(Call(t.text, qual, k, tuple(split_top(toks, nxt + 1, c))))
    return out


def identifier_positions(toks: list[Tok], lo: int, hi: int) -> list[tuple[int, str]]:
    """(token index, name) of an expression's identifiers that name variables (not members after '.',
    not qualified names)."""
    out = []
    for k in range(lo, hi):
        t = toks[k]
        if t.kind != "id":
            continue
        if k > 0 and toks[k - 1].text in (".", "->", "::"):
            continue
        if k + 1 < len(toks) and toks[k + 1].text == "::":
            continue
        out.append((k, t.text))
    return out


def identifiers(toks: list[Tok], lo: int, hi: int) -> list[str]:
    return [name for _, name in identifier_positions(toks, lo, hi)]


def text_of(toks: list[Tok], lo: int, hi: int, source: str) -> str:
    """The source text of tokens ``[lo, hi)``, whitespace collapsed."""
    if lo >= hi:
        return ""
    last = toks[hi - 1]
    return " ".join(source[toks[lo].start : last.start + len(last.text)].split())

"""A small C preprocessor: tokens, #define parsing and function-like macro expansion.

Enough of C99 6.10.3 for Metal kernel sources: object- and function-like
macros, variadic ``__VA_ARGS__``, ``#`` stringify, ``##`` paste (with
placemarkers), rescanning with recursion suppression.  Conditionals are not
evaluated.  Problems are collected as messages, never raised.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

TOKEN_RE = re.compile(
    r"""
     (?P<nl>\n)
    |(?P<ws>(?:[ \t\r\f\v]|\\\r?\n)+)
    |(?P<comment>//[^\n]*|/\*.*?\*/)
    |(?P<badcomment>/\*)
    |(?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
    |(?P<badstr>["'])
    |(?P<id>[A-Za-z_]\w*)
    |(?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
    |(?P<punc>\#\#|::|->|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|[-+*/%&|^!~<>=?:;,.()\[\]{}\#])
    |(?P<other>.)
    """,
    re.X | re.S,
)


class Tok:
    """One preprocessing token. ``space``: whitespace precedes it."""

    __slots__ = ("kind", "text", "space", "painted", "paste_op")

    def __init__(self, kind: str, text: str, space: bool = False) -> None:
        self.kind = kind  # id | str | num | punc | other | pm (placemarker)
        self.text = text
        self.space = space
        self.painted = False  # a disabled macro name: never expands again
        self.paste_op = False  # a ``##`` from a macro body

    def copy(self, space: bool | None = None) -> "Tok":
        t = Tok(self.kind, self.text, self.space if space is None else space)
        t.painted = self.painted
        return t

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Tok({self.kind}:{self.text!r})"


def tokenize(text: str, errors: list[str] | None = None) -> list[Tok]:
    """Tokens of ``text`` (comments and newlines become whitespace)."""
    out: list[Tok] = []
    space = False
    for m in TOKEN_RE.finditer(text):
        kind = m.lastgroup
        if kind in ("ws", "comment", "nl"):
            space = True
            continue
        if kind == "badcomment":
            if errors is not None:
                errors.append("unterminated comment")
            break
        if kind == "badstr":
            if errors is not None:
                errors.append("unterminated string literal")
            kind = "other"
        out.append(Tok(kind, m.group(), space))
        space = False
    return out


@dataclass
class Macro:
    name: str
    params: tuple[str, ...] | None  # None: object-like
    body: list[Tok]
    variadic: bool = False
    line: int = 0
    origin: str = ""  # path (or "") where it was defined


DEFINE_HEAD_RE = re.compile(r"\s*([A-Za-z_]\w*)(\()?")


def parse_define(rest: str, errors: list[str]) -> Macro | None:
    """``rest`` is the directive text after ``define`` (splices already joined)."""
    m = DEFINE_HEAD_RE.match(rest)
    if not m:
        errors.append("#define without a macro name")
        return None
    name = m.group(1)
    if not m.group(2):
        return Macro(name, None, tokenize(rest[m.end():], errors))
    close = rest.find(")", m.end())
    if close < 0:
        errors.append(f"#define {name}: unclosed parameter list")
        return None
    params: list[str] = []
    variadic = False
    raw = rest[m.end():close].strip()
    if raw:
        for p in (x.strip() for x in raw.split(",")):
            if p == "...":
                variadic = True
                params.append("__VA_ARGS__")
            elif p.endswith("...") and p[:-3].strip().isidentifier():
                variadic = True
                params.append(p[:-3].strip())
            elif p.isidentifier():
                params.append(p)
            else:
                errors.append(f"#define {name}: bad parameter {p!r}")
                return None
    body = tokenize(rest[close + 1:], errors)
    if body and body[0].text == "##" or body and body[-1].text == "##":
        errors.append(f"#define {name}: '##' at either end of the body")
    return Macro(name, tuple(params), body, variadic)


def split_args(toks: list[Tok]) -> list[list[Tok]]:
    """Split the tokens between an invocation's parentheses on top-level commas."""
    args: list[list[Tok]] = [[]]
    depth = 0
    for t in toks:
        if t.kind == "punc":
            if t.text == "(":
                depth += 1
            elif t.text == ")":
                depth -= 1
            elif t.text == "," and depth == 0:
                args.append([])
                continue
        args[-1].append(t)
    return args


def stringify(toks: list[Tok]) -> str:
    parts: list[str] = []
    for i, t in enumerate(toks):
        if t.kind == "pm":
            continue
        if i and t.space and parts:
            parts.append(" ")
        if t.kind == "str":
            parts.append(t.text.replace("\\", "\\\\").replace('"', '\\"'))
        else:
            parts.append(t.text)
    return '"' + "".join(parts) + '"'


def string_value(literal: str) -> str:
    """The characters of a "..." literal (simple escapes only)."""
    body = literal[1:-1]
    if "\\" not in body:
        return body
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


# hook(name, args, result_tokens) -> keep result in the output?
BaseHook = Callable[[str, list[list[Tok]], list[Tok]], bool]


@dataclass
class Expander:
    macros: dict[str, Macro]
    base: frozenset[str] = frozenset()  # macro names reported to ``hook``
    hook: BaseHook | None = None
    fallback: dict[str, Macro] = field(default_factory=dict)  # used when ``macros`` lacks a name
    errors: list[str] = field(default_factory=list)
    budget: int = 2_000_000  # tokens produced before giving up
    body_of: Callable[[Macro], list[Tok]] | None = None  # e.g. a pruned body (see prune_body)

    def lookup(self, name: str) -> Macro | None:
        m = self.macros.get(name)
        return m if m is not None else self.fallback.get(name)

    def expand(self, toks: list[Tok], disabled: frozenset[str] = frozenset(), in_base: bool = False) -> list[Tok]:
        out: list[Tok] = []
        i, n = 0, len(toks)
        while i < n:
            t = toks[i]
            i += 1
            if t.kind != "id" or t.painted:
                out.append(t)
                continue
            mac = self.lookup(t.text)
            if mac is None:
                out.append(t)
                continue
            if t.text in disabled:
                p = t.copy()
                p.painted = True
                out.append(p)
                continue
            args: list[list[Tok]] = []
            if mac.params is not None:
                if i >= n or toks[i].text != "(":
                    out.append(t)  # a function-like macro name without '(' is no invocation
                    continue
                depth, j = 0, i
                while j < n:
                    x = toks[j].text
                    if toks[j].kind == "punc":
                        if x == "(":
                            depth += 1
                        elif x == ")":
                            depth -= 1
                            if depth == 0:
                                break
                    j += 1
                if j >= n:
                    self.errors.append(f"unterminated invocation of macro {mac.name}")
                    out.extend(toks[i - 1:])
                    return out
                args = split_args(toks[i + 1:j])
                i = j + 1
                if not self._check_arity(mac, args):
                    continue
            is_base = not in_base and mac.name in self.base and self.hook is not None
            body = self._substitute(mac, args, disabled, in_base or is_base)
            result = self.expand(body, disabled | {mac.name}, in_base or is_base)
            self.budget -= len(result)
            if self.budget < 0:
                self.errors.append("macro expansion too large; stopped")
                return out
            if is_base:
                if self.hook(mac.name, [self.expand(a, disabled, True) for a in args], result):  # type: ignore[misc]
                    out.extend(result)
            else:
                if result and t.space:
                    result[0] = result[0].copy(space=True)
                last = result[-1] if result else None
                if last is not None and last.kind == "id" and not last.painted and i < n and toks[i].text == "(":
                    follow = self.lookup(last.text)
                    if follow is not None and follow.params is not None:
                        # "#define ALIAS REAL" then "ALIAS(x)": the arguments follow the expansion
                        out.extend(result[:-1])
                        toks, i, n = [last, *toks[i:]], 0, len(toks) - i + 1
                        continue
                out.extend(result)
        return out

    def _check_arity(self, mac: Macro, args: list[list[Tok]]) -> bool:
        assert mac.params is not None
        want = len(mac.params)
        if want == 0 and len(args) == 1 and not args[0]:
            args.clear()
            return True
        if mac.variadic and len(args) >= want - 1:
            if len(args) == want - 1:
                args.append([])
            elif len(args) > want:
                rest: list[Tok] = []
                for k, a in enumerate(args[want - 1:]):
                    if k:
                        rest.append(Tok("punc", ","))
                    rest.extend(a)
                del args[want - 1:]
                args.append(rest)
            return True
        if len(args) != want:
            self.errors.append(f"macro {mac.name} takes {want} argument(s), {len(args)} given")
            return False
        return True

    def _substitute(self, mac: Macro, args: list[list[Tok]], disabled: frozenset[str], in_base: bool) -> list[Tok]:
        body = self.body_of(mac) if self.body_of is not None else mac.body
        if mac.params is None:
            out = [b.copy() for b in body]
            for k, b in enumerate(body):
                out[k].paste_op = b.text == "##"
            return self._paste(out) if any(b.text == "##" for b in body) else out
        index = {p: k for k, p in enumerate(mac.params)}
        expanded: dict[int, list[Tok]] = {}
        strings: dict[int, str] = {}
        out: list[Tok] = []
        has_paste = False
        nb = len(body)
        k = 0
        while k < nb:
            b = body[k]
            if b.text == "#" and b.kind == "punc" and k + 1 < nb and body[k + 1].text in index:
                a = index[body[k + 1].text]
                if a not in strings:
                    strings[a] = stringify(args[a])
                out.append(Tok("str", strings[a], b.space))
                k += 2
                continue
            if b.text == "##" and b.kind == "punc":
                op = b.copy()
                op.paste_op = True
                out.append(op)
                has_paste = True
                k += 1
                continue
            if b.kind == "id" and b.text in index:
                a = index[b.text]
                near_paste = (k + 1 < nb and body[k + 1].text == "##") or (k > 0 and body[k - 1].text == "##")
                if near_paste:
                    rep = [x.copy() for x in args[a]] or [Tok("pm", "")]
                else:
                    if a not in expanded:
                        expanded[a] = self.expand(args[a], disabled, in_base)
                    rep = [x.copy() for x in expanded[a]]
                if rep:
                    rep[0].space = b.space
                out.extend(rep)
                k += 1
                continue
            out.append(b.copy())
            k += 1
        if has_paste:
            out = self._paste(out)
        return [t for t in out if t.kind != "pm"]

    def _paste(self, toks: list[Tok]) -> list[Tok]:
        out: list[Tok] = []
        k, n = 0, len(toks)
        while k < n:
            t = toks[k]
            if t.paste_op and out and k + 1 < n:
                left = out.pop()
                right = toks[k + 1]
                if left.kind == "pm":
                    out.append(right)
                elif right.kind == "pm":
                    out.append(left)
                else:
                    text = left.text + right.text
                    lexed = tokenize(text)
                    if len(lexed) == 1:
                        lexed[0].space = left.space
                        out.append(lexed[0])
                    else:
                        self.errors.append(f"pasting {left.text!r} and {right.text!r} does not give a valid token")
                        out.extend([left, right])
                k += 2
                continue
            out.append(t)
            k += 1
        return out


def _balanced_end(toks: list[Tok], i: int) -> int:
    """Index just past the ')' matching the '(' at ``toks[i]`` (len(toks) if unbalanced)."""
    depth = 0
    for j in range(i, len(toks)):
        x = toks[j]
        if x.kind == "punc":
            if x.text == "(":
                depth += 1
            elif x.text == ")":
                depth -= 1
                if depth == 0:
                    return j + 1
    return len(toks)


def prune_body(mac: Macro, keep_name: Callable[[str], bool]) -> list[Tok]:
    """The parts of a macro body that matter to a reader of registrations:
    ``host_name(...)``, ``struct X {``, ``kernel void f(``, and calls of
    parameters or of macros ``keep_name`` accepts; ``;`` between them.
    Returns the whole body when a ``##`` paste could form a macro call."""
    body = mac.body
    n = len(body)
    for k, t in enumerate(body):
        if t.text == "##":
            j = k + 1
            while j + 1 < n and body[j + 1].text == "##":
                j += 2
            if j + 1 < n and body[j + 1].text == "(":
                return body
    params = frozenset(mac.params or ())
    out: list[Tok] = []
    i = 0
    while i < n:
        t = body[i]
        if t.kind != "id":
            i += 1
            continue
        nxt = body[i + 1].text if i + 1 < n else ""
        if t.text == "host_name" and nxt == "(":
            j = _balanced_end(body, i + 1)
        elif t.text == "struct":
            j = i + 1
            while j < n and body[j].text not in ("{", ":", ";"):
                j += 1
            j = min(j + 1, n)
        elif (t.text, nxt) in (("kernel", "void"), ("void", "kernel")):
            j = i + 2
            while j < n and body[j].text not in ("(", ";", "{", "<", "::"):
                x = body[j]
                if x.kind == "id" and j + 1 < n and body[j + 1].text == "(" and (x.text in params or keep_name(x.text)):
                    j = _balanced_end(body, j + 1)  # the name is built by a macro call
                else:
                    j += 1
            if j < n and body[j].text == "(":
                if out:
                    out.append(Tok("punc", ";"))
                out.extend(body[i : j + 1])
                out.append(Tok("punc", ")"))
            i = j
            continue
        elif t.text in params and nxt == "(":
            j = _balanced_end(body, i + 1)
        elif keep_name(t.text):
            j = _balanced_end(body, i + 1) if nxt == "(" else i + 1
        else:
            i += 1
            continue
        if out:
            out.append(Tok("punc", ";"))
        out.extend(body[i:j])
        i = j
    return out


def find_host_names(toks: list[Tok]) -> Iterable[str]:
    """``host_name("a" "b")`` in a token list -> "ab" (skips non-literal names)."""
    n = len(toks)
    for i, t in enumerate(toks):
        if t.kind == "id" and t.text == "host_name" and i + 1 < n and toks[i + 1].text == "(":
            j = i + 2
            parts: list[str] = []
            ok = True
            while j < n and toks[j].text != ")":
                if toks[j].kind != "str" or not toks[j].text.startswith('"'):
                    ok = False
                    break
                parts.append(string_value(toks[j].text))
                j += 1
            if ok and j < n and parts:
                yield "".join(parts)


def find_functors(toks: list[Tok]) -> Iterable[str]:
    """``struct NAME_functor {`` (or ``: base``) in a token list -> NAME."""
    n = len(toks)
    for i, t in enumerate(toks):
        if t.kind == "id" and t.text == "struct" and i + 2 < n:
            name, nxt = toks[i + 1], toks[i + 2]
            if name.kind == "id" and name.text.endswith("_functor") and nxt.text in ("{", ":"):
                yield name.text[: -len("_functor")]


def find_kernel_functions(toks: list[Tok]) -> Iterable[tuple[str, bool]]:
    """``kernel void NAME(`` / ``void kernel NAME(`` (definitions and declarations, not instantiations)
    -> (NAME, whether a library exports it under NAME: not a template, no ``[[host_name]]``)."""
    n = len(toks)
    for i, t in enumerate(toks):
        if t.kind != "id" or i + 3 >= n or toks[i + 2].kind != "id" or toks[i + 3].text != "(":
            continue
        if (t.text, toks[i + 1].text) in (("kernel", "void"), ("void", "kernel")):
            yield toks[i + 2].text, not (i and toks[i - 1].text in EXPORT_HIDERS)


EXPORT_HIDERS = (">", "]")  # "template <...> kernel", "[[host_name(...)]] kernel": not exported by its own name

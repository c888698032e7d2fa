"""The macro expander (C99 6.10.3) on the token stream of ``migrate.source.tokens``.

Object- and function-like macros, variadic ``__VA_ARGS__`` and ``__VA_OPT__``, ``#``
stringify, ``##`` paste (with placemarkers), line continuations (joined by the
tokenizer), rescanning with recursion suppression (a macro never expands inside its
own expansion).  Conditionals are not evaluated.  Problems are collected as
messages, never raised.

Host files use it through ``find_macros`` / ``find_invocations`` / ``expand`` (bytes
in, bytes out); the Metal reader drives ``Expander`` directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Callable

from migrate.source.file import SourceFile
from migrate.source.literal_search import matches_at
from migrate.source.tokens import Tok, render, tokenize


@dataclass
class Macro:
    name: str
    params: tuple[str, ...] | None  # None: object-like; "__VA_ARGS__" (or a named one) last if variadic
    body: list[Tok]
    variadic: bool = False
    line: int = 0
    origin: str = ""  # path (or "") where it was defined
    start: int = -1  # the #define line, byte offsets
    end: int = -1

    @property
    def text(self) -> str:
        """The replacement list as written (one logical line)."""
        return render(self.body).strip()

    def __getattr__(self, name: str):
        # parse_define(..., lazy=True) leaves the body as ``_deferred`` (the directive text, where the body
        # starts): tokenized on first read (a header defines many macros a file never expands)
        deferred = self.__dict__.get("_deferred") if name == "body" else None
        if deferred is None:
            raise AttributeError(name)
        rest, at = deferred
        self.body = tokenize(rest, at, directives=False, errors=[])
        del self.__dict__["_deferred"]
        return self.body


# ------------------------------------------------------------------ #define
_DIRECTIVE_RE = re.compile(r"[ \t]*#[ \t]*(\w*)(.*)", re.S)
_COMMENT_OR_STRING_RE = re.compile(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*.*?\*/", re.S)
_DEFINE_HEAD_RE = re.compile(r"\s*([A-Za-z_]\w*)(\()?")


def directive(raw: str) -> tuple[str, str]:
    """A preprocessor line -> (directive name, rest), continuations joined, comments blanked."""
    joined = raw.replace("\\\r\n", " ").replace("\\\n", " ")
    if "/" in joined:
        joined = _COMMENT_OR_STRING_RE.sub(lambda m: m.group() if m.group()[0] in "\"'" else " ", joined)
    m = _DIRECTIVE_RE.match(joined)
    return (m.group(1), m.group(2)) if m else ("", "")


def parse_define(rest: str, errors: list[str], lazy: bool = False) -> Macro | None:
    """``rest`` is the directive text after ``define`` (continuations already joined).  ``lazy``: the body is
    tokenized on first read, and its problems are not reported (a header's macros)."""
    m = _DEFINE_HEAD_RE.match(rest)
    if not m:
        errors.append("#define without a macro name")
        return None
    name = m.group(1)
    if not m.group(2):
        return (
            _deferred(name, None, rest, m.end())
            if lazy
            else Macro(name, None, tokenize(rest, m.end(), directives=False, errors=errors))
        )
    close = rest.find(")", m.end())
    if close < 0:
        errors.append(f"#define {name}: unclosed parameter list")
        return None
    params: list[str] = []
    variadic = False
    raw = rest[m.end() : close].strip()
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
    if lazy:
        return _deferred(name, tuple(params), rest, close + 1, variadic)
    body = tokenize(rest, close + 1, directives=False, errors=errors)
    if body and (body[0].text == "##" or body[-1].text == "##"):
        errors.append(f"#define {name}: '##' at either end of the body")
    return Macro(name, tuple(params), body, variadic)


def _deferred(name: str, params: tuple[str, ...] | None, rest: str, at: int, variadic: bool = False) -> Macro:
    mac = Macro(name, params, [], variadic)
    del mac.__dict__["body"]
    mac.__dict__["_deferred"] = (rest, at)
    return mac


# ------------------------------------------------------------------ helpers
def split_args(toks: list[Tok]) -> list[list[Tok]]:
    """The tokens between an invocation's parentheses, split on top-level commas."""
    args: list[list[Tok]] = [[]]
    depth = 0
    for t in toks:
        if t.kind == "punc":
            if t.text in ("(", "[", "{"):
                depth += 1
            elif t.text in (")", "]", "}"):
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


def matching_paren(toks: list[Tok], i: int) -> int:
    """Index of the ')' closing the '(' at ``toks[i]`` (-1 if unbalanced)."""
    depth = 0
    for j in range(i, len(toks)):
        x = toks[j]
        if x.kind == "punc":
            if x.text == "(":
                depth += 1
            elif x.text == ")":
                depth -= 1
                if depth == 0:
                    return j
    return -1


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
    body_of: Callable[[Macro], list[Tok]] | None = None  # e.g. a pruned body
    shares_body: bool = False  # body tokens go out uncopied: a caller that only renders the expansion

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
                    out.append(t)  # a function-like macro's name without '(' is no invocation
                    continue
                j = matching_paren(toks, i)
                if j < 0:
                    self.errors.append(f"unterminated invocation of macro {mac.name}")
                    out.extend(toks[i - 1 :])
                    return out
                args = split_args(toks[i + 1 : j])
                i = j + 1
                if not self._check_arity(mac, args):
                    continue
            is_base = not in_base and mac.name in self.base and self.hook is not None
            body = self.substitute(mac, args, disabled, in_base or is_base)
            result = self.expand(body, disabled | {mac.name}, in_base or is_base)
            self.budget -= len(result)
            if self.budget < 0:
                self.errors.append("macro expansion too large; stopped")
                return out
            if is_base:
                if self.hook(mac.name, [self.expand(a, disabled, True) for a in args], result):  # type: ignore[misc]
                    out.extend(result)
                continue
            if result:
                result[0] = result[0].copy(space=t.space or result[0].space)
            last = result[-1] if result else None
            if last is not None and last.kind == "id" and not last.painted and i < n and toks[i].text == "(":
                follow = self.lookup(last.text)
                if follow is not None and follow.params is not None and last.text not in disabled:
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
                for k, a in enumerate(args[want - 1 :]):
                    if k:
                        rest.append(Tok("punc", ","))
                    rest.extend(a)
                del args[want - 1 :]
                args.append(rest)
            return True
        if len(args) != want:
            self.errors.append(f"macro {mac.name} takes {want} argument(s), {len(args)} given")
            return False
        return True

    def substitute(
        self,
        mac: Macro,
        args: list[list[Tok]],
        disabled: frozenset[str] = frozenset(),
        in_base: bool = False,
        body: list[Tok] | None = None,
    ) -> list[Tok]:
        """The replacement list with arguments substituted, ``#`` and ``##`` applied (not rescanned)."""
        inner = body is not None  # a __VA_OPT__ group: placemarkers stay for the enclosing pastes
        if body is None:
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
        shares = self.shares_body
        nb = len(body)
        k = 0
        while k < nb:
            b = body[k]
            if b.text == "__VA_OPT__" and mac.variadic and k + 1 < nb and body[k + 1].text == "(":
                close = matching_paren(body, k + 1)
                close = nb if close < 0 else close
                if any(x.kind != "pm" for x in args[-1]):
                    inner = self.substitute(mac, args, disabled, in_base, body[k + 2 : close])
                    if inner:
                        inner[0] = inner[0].copy(space=b.space)
                    out.extend(inner)
                else:
                    out.append(Tok("pm", ""))
                k = close + 1
                continue
            if b.text == "#" and b.kind == "punc" and k + 1 < nb and body[k + 1].text in index:
                a = index[body[k + 1].text]
                if a not in strings:
                    strings[a] = stringify(args[a])
                out.append(Tok("str", strings[a], -1, b.space))
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
            out.append(b if shares else b.copy())
            k += 1
        if has_paste:
            out = self._paste(out)
        return out if inner else [t for t in out if t.kind != "pm"]

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
                    lexed = tokenize(left.text + right.text, directives=False)
                    if len(lexed) == 1:
                        lexed[0].space = left.space
                        lexed[0].start = -1
                        out.append(lexed[0])
                    else:
                        self.errors.append(f"pasting {left.text!r} and {right.text!r} does not give a valid token")
                        out.extend([left, right])
                k += 2
                continue
            out.append(t)
            k += 1
        return out


# ------------------------------------------------------------ host files (bytes)
_TEXT = attrgetter("text")


@dataclass(frozen=True)
class Invocation:
    macro: str
    start: int  # the macro name
    end: int  # after ")" and a trailing ";" if present
    args: tuple[bytes, ...]  # original text of each argument, stripped
    arg_spans: tuple[tuple[int, int], ...] = ()  # offsets of each argument (unstripped)


def find_macros(sf: SourceFile) -> dict[str, Macro]:
    """The function-like macros a file defines (the last definition of a name wins)."""
    found: dict[str, Macro] = {}
    code, data = sf.code, sf.data
    for ds, de in sf.directives:
        if code.find(b"define", ds, de) < 0:
            continue
        name, rest = directive(data[ds:de].decode("latin-1"))  # the line alone: no whole-file decode
        if name != "define":
            continue
        mac = parse_define(rest, [])
        if mac is not None and mac.params is not None:
            mac.start, mac.end, mac.origin = ds, de, sf.path
            found[mac.name] = mac
    return found


_PARENS = re.compile(rb"[()]")
_SEMI = re.compile(rb"[ \t]*;")
_ARG_TOKENS = re.compile(rb"[(){}\[\],]")


def find_invocations(sf: SourceFile, names: set[str], unterminated: list[int] | None = None) -> list[Invocation]:
    """Invocations ``NAME(args)`` of the given macros outside preprocessor lines.
    Offsets of invocations whose ``(`` is never closed go to ``unterminated``."""
    if not names:
        return []
    code, data = sf.code, sf.data
    pat = re.compile(rb"\b(" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")[ \t]*\(")
    found: list[Invocation] = []
    for m in matches_at(pat, code, [n.encode() for n in names]):
        if sf.in_directive(m.start()):
            continue
        close = _close_paren(code, m.end() - 1)
        if close < 0:
            if unterminated is not None:
                unterminated.append(m.start())
            continue
        end = close + 1
        semi = _SEMI.match(code, end)
        if semi:
            end = semi.end()
        spans = tuple(_split_arg_spans(code, m.end(), close))
        found.append(Invocation(m.group(1).decode(), m.start(), end, tuple(data[a:b].strip() for a, b in spans), spans))
    return found


def _close_paren(code: bytes, open_at: int) -> int:
    depth = 0
    for m in _PARENS.finditer(code, open_at):
        depth += 1 if code[m.start()] == 40 else -1
        if depth == 0:
            return m.start()
    return -1


def _split_arg_spans(code: bytes, start: int, close: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    depth = 0
    begin = start
    for m in _ARG_TOKENS.finditer(code, start, close):
        c = code[m.start()]
        if c in b"({[":
            depth += 1
        elif c in b")}]":
            depth -= 1
        elif depth == 0:
            spans.append((begin, m.start()))
            begin = m.end()
    if spans or code[start:close].strip():
        spans.append((begin, close))
    return spans


def expand(macro: Macro, args: tuple[bytes, ...], nested: dict[str, Macro] | None = None) -> bytes:
    """``macro`` invoked with ``args`` (source text), as text: arguments substituted, ``#``/``##``
    applied, and invocations of ``nested`` macros in the result expanded (rescanning)."""
    ex = Expander(dict(nested or {}), shares_body=True)
    toks = [tokenize(a.decode("latin-1"), directives=False) for a in args]
    if macro.params is not None and not ex._check_arity(macro, toks):
        toks = (toks + [[] for _ in macro.params])[: len(macro.params)]
    body = ex.substitute(macro, toks)
    if not ex.macros.keys().isdisjoint(map(_TEXT, body)):  # else rescanning leaves every token as it is
        body = ex.expand(body, frozenset({macro.name}))
    return render(body).encode("latin-1", "replace")


def expand_nested(text: bytes, macros: dict[str, Macro]) -> bytes:
    """``text`` with invocations of ``macros`` expanded (other text kept as written)."""
    sf = SourceFile(text)
    invs = find_invocations(sf, set(macros))
    if not invs:
        return text
    out = bytearray()
    pos = 0
    for inv in invs:
        if inv.start < pos:
            continue
        out += text[pos : inv.start]
        out += expand(macros[inv.macro], inv.args, macros)
        out += text[inv.end - (1 if text[inv.end - 1 : inv.end] == b";" else 0) : inv.end]
        pos = inv.end
    out += text[pos:]
    return bytes(out)

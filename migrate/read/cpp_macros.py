"""File-local function-like macros: definitions, invocations, expansion.

Only what host files need: ``#define NAME(a, b) body`` with ``#a``
(stringification) and ``a ## b`` (token pasting).  Other macros inside an
expansion are left as written, except file-local macros handed in ``nested``
(expanded recursively, a few levels deep).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .cpp_lex import Scrubbed, scrub

_DEFINE = re.compile(rb"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)", re.S)
_BODY_TOKEN = re.compile(
    rb'(?P<paste>##)|(?P<str>"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')'
    rb"|(?P<hash>#)[ \t]*(?P<sname>[A-Za-z_]\w*)|(?P<name>\b[A-Za-z_]\w*)"
)
_PASTE = re.compile(rb"[ \t]*\x00[ \t]*")
_CONTINUATION = re.compile(rb"\\\r?\n")
_MAX_DEPTH = 4


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...]
    body: bytes  # original text, line continuations turned into spaces
    start: int  # the #define line
    end: int


@dataclass(frozen=True)
class Invocation:
    macro: str
    start: int  # the macro name
    end: int  # after ")" and a trailing ";" if present
    args: tuple[bytes, ...]  # original text of each argument, stripped
    arg_spans: tuple[tuple[int, int], ...] = ()  # offsets of each argument (unstripped)


def find_macros(sc: Scrubbed) -> dict[str, Macro]:
    found: dict[str, Macro] = {}
    for ds, de in sc.directives:
        m = _DEFINE.match(sc.code, ds, de)
        if not m:
            continue
        params = tuple(p.strip().decode("latin-1") for p in m.group(2).split(b",") if p.strip())
        body = _CONTINUATION.sub(_spaces, sc.data[m.end(): de])
        # comments in the body are blanked (taken from the scrubbed copy), literals kept
        code_body = _CONTINUATION.sub(_spaces, sc.code[m.end(): de])
        body = _keep_literals(body, code_body)
        found[m.group(1).decode("latin-1")] = Macro(m.group(1).decode("latin-1"), params, body, ds, de)
    return found


def _spaces(m: re.Match) -> bytes:
    """A spliced line continuation: one logical line, same length (so ``sel##\\<nl>WithTensor`` pastes)."""
    return b" " * len(m.group())


def _keep_literals(orig: bytes, code: bytes) -> bytes:
    """``code`` with the string/char literal contents of ``orig`` put back."""
    if orig == code:
        return orig
    out = bytearray(code)
    for m in re.finditer(rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', code):
        out[m.start(): m.end()] = orig[m.start(): m.end()]
    return bytes(out)


def find_invocations(sc: Scrubbed, names: set[str], unterminated: list[int] | None = None) -> list[Invocation]:
    """Invocations ``NAME(args)`` of the given macros outside preprocessor lines.

    Offsets of invocations whose ``(`` is never closed go to ``unterminated``.
    """
    if not names:
        return []
    code, data = sc.code, sc.data
    pat = re.compile(rb"\b(" + b"|".join(re.escape(n.encode()) for n in names) + rb")[ \t]*\(")
    found: list[Invocation] = []
    for m in pat.finditer(code):
        if sc.in_directive(m.start()):
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
        spans = tuple(_split_args(code, m.end(), close))
        args = tuple(data[a:b].strip() for a, b in spans)
        found.append(Invocation(m.group(1).decode(), m.start(), end, args, spans))
    return found


_PARENS = re.compile(rb"[()]")
_SEMI = re.compile(rb"[ \t]*;")


def _close_paren(code: bytes, open_at: int) -> int:
    depth = 0
    for m in _PARENS.finditer(code, open_at):
        depth += 1 if code[m.start()] == 40 else -1
        if depth == 0:
            return m.start()
    return -1


_ARG_TOKENS = re.compile(rb"[(){}\[\],]")


def _split_args(code: bytes, start: int, close: int) -> list[tuple[int, int]]:
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


def expand(macro: Macro, args: tuple[bytes, ...], nested: dict[str, Macro] | None = None,
           depth: int = 0, active: frozenset[str] = frozenset()) -> bytes:
    """The macro body with arguments substituted (``#`` and ``##`` applied).

    Invocations of ``nested`` macros inside it are expanded too, except those
    already being expanded (``active``), as the C preprocessor does.
    """
    params = list(macro.params)
    values = dict(zip(params, args))
    if params and params[-1] == "...":
        values["__VA_ARGS__"] = b", ".join(args[len(params) - 1:])
    values = {k.encode(): v for k, v in values.items()}

    def repl(m: re.Match[bytes]) -> bytes:
        if m.group("paste"):
            return b"\x00"
        if m.group("str"):
            return m.group()
        if m.group("hash"):
            name = m.group("sname")
            if name in values:
                return b'"' + values[name].replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'
            return m.group()
        name = m.group("name")
        return values.get(name, name)

    text = _PASTE.sub(b"", _BODY_TOKEN.sub(repl, macro.body))
    active = active | {macro.name}
    if nested and depth < _MAX_DEPTH:
        usable = {n: m for n, m in nested.items() if n not in active}
        if usable:
            text = expand_nested(text, usable, depth + 1, active)
    return text


def expand_nested(text: bytes, macros: dict[str, Macro], depth: int = 0,
                  active: frozenset[str] = frozenset()) -> bytes:
    """Expand invocations of ``macros`` inside ``text`` (one pass, recursive)."""
    sc = scrub(text)
    invs = find_invocations(sc, set(macros))
    if not invs:
        return text
    out = bytearray()
    pos = 0
    for inv in invs:
        if inv.start < pos:
            continue
        out += text[pos: inv.start]
        out += expand(macros[inv.macro], inv.args, macros, depth, active)
        out += text[inv.end - (1 if text[inv.end - 1: inv.end] == b";" else 0): inv.end]
        pos = inv.end
    out += text[pos:]
    return bytes(out)

"""What the shared (CPU-side) kernels of aten/src/ATen/native do, by a scan of their code.

For a header: the dispatch stubs it declares.  For a .cpp: per function, the
stub names it reaches for an MPS tensor (``*_stub`` called or passed to a
helper, or any name called with a device type first: ``where_kernel(iter.device_type(), iter)``;
directly or through same-file helpers; the index keeps those declared as stubs) and the ``at::`` functions it calls (a
kernel that calls another operator and reaches no stub is a composite wrapper).

A stub or helper used only inside ``if (cond)`` where ``cond`` holds only on
another device is not reached for MPS.  ``cond`` holds only on another device
when one of its ``&&`` operands does: ``x.is_cpu()``, ``x.device().type() ==
DeviceType::CUDA``, an ``||`` of such tests, a ``bool`` local initialised with
one, or a call of a same-file predicate that returns false off that device
(``if (!self.device().is_cpu()) return false;``).
"""

from __future__ import annotations

import re

from migrate.source import SourceFile

_DECLARE_DISPATCH = re.compile(rb"\bDECLARE_DISPATCH\s*\(\s*[^;]*?,\s*(\w+)\s*\)")
_STUB = re.compile(rb"\b(\w+_stub)\b")
_DEVICE_ARG = re.compile(rb"device_type\(\)|device\(\)\.type\(\)|\bk(?:CPU|CUDA|MPS)\b")
_CALLED_WITH = re.compile(rb"\b(?!(?:if|while|switch|return|for)\b)(\w+)\s*\(\s*[\w.\->]*(?:\(\)[\w.\->]*)*$")
_DEVICE_HINT = re.compile(rb"is_[a-z]+\(\)|DeviceType::|\bk[A-Z][A-Za-z]+\b")
_AT_CALL = re.compile(rb"\bat::(?!native::)(?:_ops::)?(\w+)\s*[(<]")
_CALL = re.compile(rb"\b(\w+)\s*\(")
_IMPL_HEAD = re.compile(
    rb"^TORCH_IMPL_FUNC\((\w+)\)|^[A-Za-z_][\w:<>,&* ]*?\b(\w+)\s*\([^;{]*\)\s*(?:const\s*)?\{", re.M
)
_IF = re.compile(rb"\bif\s*\(")
_OTHER_DEVICE = rb"(?:cpu|cuda|xpu|hip|meta)"
_CHAIN = rb"[\w.:\->]*(?:\(\)[\w.:\->]*)*"  # self.device().type(), t.is_cpu
_IS_DEVICE = re.compile(_CHAIN + rb"\.is_" + _OTHER_DEVICE + rb"\(\)")
_DEVICE_NAME = rb"(?:c10::|at::)?(?:DeviceType::|k)(?i:" + _OTHER_DEVICE + rb")"
_EQ_DEVICE = re.compile(
    rb"(?:" + _CHAIN + rb"\s*==\s*" + _DEVICE_NAME + rb"|" + _DEVICE_NAME + rb"\s*==\s*" + _CHAIN + rb")"
)
_BOOL_LOCAL = re.compile(rb"\bbool\s+(\w+)\s*=\s*([^;]*);")
_REQUIRES_DEVICE = re.compile(  # a predicate's "not that device: return false"
    rb"if\s*\(\s*!\s*" + _CHAIN + rb"\.is_" + _OTHER_DEVICE + rb"\(\)\s*\)\s*\{?\s*return\s+false"
)


def scan_native_file(rel: str, data: bytes) -> tuple[tuple, tuple]:
    """((stub, span of its name) declared by a header, (function, stubs, at_calls) defined in a .cpp).
    Reads the code only: comments and literal contents are blanked (``SourceFile.code``)."""
    sf = SourceFile(data, rel)
    data = sf.code
    if rel.endswith(".h"):
        return tuple((m.group(1).decode(), sf.span(m.start(1), m.end(1))) for m in _DECLARE_DISPATCH.finditer(data)), ()
    bodies: dict[str, list[bytes]] = {}
    for text in (data, _impl_macro_expansions(data)):
        for m in _IMPL_HEAD.finditer(text):
            open_at = text.find(b"{", m.end() - 1)
            close = _match(text, open_at, b"{", b"}") if open_at >= 0 else -1
            if close > 0:  # a parameter named like a stub (``ReduceStub& reduce_stub``) is not the stub
                params = set(_STUB.findall(text, m.start(), open_at))
                body = text[open_at : close + 1]
                if params:
                    body = _STUB.sub(lambda s: b"" if s.group() in params else s.group(), body)
                bodies.setdefault((m.group(1) or m.group(2)).decode(), []).append(body)
    predicates = frozenset(n for n, bs in bodies.items() if any(_REQUIRES_DEVICE.search(b) for b in bs))
    direct: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    defined = {n.encode() for n in bodies}
    for name, bs in bodies.items():
        direct[name], calls[name] = set(), set()
        for b in bs:
            guard = _Guards(b, predicates)
            direct[name] |= {s.decode() for s, at in _stub_uses(b) if not guard.off_mps(at)}
            calls[name] |= {
                c.decode()
                for c, at in ((m.group(1), m.start()) for m in _CALL.finditer(b))
                if c in defined and not guard.off_mps(at)
            }
    out = []
    for name, bs in bodies.items():
        stubs = set(direct[name])
        todo, seen = list(calls[name]), {name}
        while todo:  # stubs of the same-file helpers it calls
            c = todo.pop()
            if c not in seen:
                seen.add(c)
                stubs |= direct[c]
                todo += calls[c]
        at_calls = {a.decode() for b in bs for a in _AT_CALL.findall(b)}
        if stubs or at_calls:
            out.append((name, tuple(sorted(stubs)), tuple(sorted(at_calls))))
    return (), tuple(out)


_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)", re.M)


def _impl_macro_expansions(data: bytes) -> bytes:
    """The ``TORCH_IMPL_FUNC`` definitions a file-local macro writes (``CREATE_BINARY_TORCH_IMPL_FUNC(fmod_out,
    fmod_stub)``), expanded at each invocation, one per line: the structured kernel ``fmod_out`` reaches
    ``fmod_stub`` even where a plain function of the same name (the Scalar overload) calls ``at::fmod_out``."""
    out = []
    for d in _DEFINE.finditer(data):
        body = d.group(3).replace(b"\\\n", b" ")
        if b"TORCH_IMPL_FUNC" not in body:
            continue
        params = [x.strip() for x in d.group(2).split(b",")]
        use = re.compile(rb"^[ \t]*" + re.escape(d.group(1)) + rb"\s*\(([^()]*)\)", re.M)
        for m in use.finditer(data, d.end()):
            args = [x.strip() for x in m.group(1).split(b",")]
            if len(args) != len(params):
                continue
            text = body
            for param, arg in zip(params, args):
                text = re.sub(rb"\b" + re.escape(param) + rb"\b", lambda _: arg, text)
            out.append(text.strip())
    return b"\n".join(out)


def _stub_uses(body: bytes):
    """(name, offset) of each ``*_stub`` and each name called with a device type first."""
    for m in _STUB.finditer(body):
        yield m.group(1), m.start()
    for m in _DEVICE_ARG.finditer(body):
        c = _CALLED_WITH.search(body, max(0, m.start() - 120), m.start())
        if c:
            yield c.group(1), c.start()


class _Guards:
    """The ``if`` blocks of one function body whose condition holds only on another device."""

    def __init__(self, body: bytes, predicates: frozenset[str]) -> None:
        self.body = body
        self.predicates = predicates
        self.locals: set[bytes] = set()
        self.locals = {m.group(1) for m in _BOOL_LOCAL.finditer(body) if self._other_device(m.group(2))}
        self.words = [w.encode() for w in predicates if w.encode() in body] + list(self.locals)
        self._blocks: list[tuple[int, int]] | None = None

    def off_mps(self, pos: int) -> bool:
        if self._blocks is None:
            self._blocks = self._find_blocks()
        return any(a <= pos < b for a, b in self._blocks)

    def _find_blocks(self) -> list[tuple[int, int]]:
        body, found = self.body, []
        for m in _IF.finditer(body):
            close = _match(body, m.end() - 1, b"(", b")")
            cond = body[m.end() : close]
            if close < 0 or not (_DEVICE_HINT.search(cond) or any(w in cond for w in self.words)):
                continue
            if not self._other_device(cond):
                continue
            start = close + 1 + len(body[close + 1 :]) - len(body[close + 1 :].lstrip())
            end = _match(body, start, b"{", b"}") if body[start : start + 1] == b"{" else body.find(b";", start)
            found.append((start, end if end >= 0 else len(body)))
        return found

    def _other_device(self, cond: bytes) -> bool:
        """Does ``cond`` hold only on a device other than MPS?"""
        cond = _unparen(cond)
        alts = _split(cond, b"||")
        if len(alts) > 1:
            return all(self._other_device(a) for a in alts)
        parts = _split(cond, b"&&")
        if len(parts) > 1:
            return any(self._other_device(p) for p in parts)
        if cond.startswith(b"!"):
            return False
        if _IS_DEVICE.fullmatch(cond) or _EQ_DEVICE.fullmatch(cond) or cond in self.locals:
            return True
        call = re.fullmatch(rb"(\w+)\s*\(.*\)", cond, re.S)
        return bool(call) and call.group(1).decode() in self.predicates


def _unparen(expr: bytes) -> bytes:
    expr = expr.strip()
    while expr.startswith(b"(") and _match(expr, 0, b"(", b")") == len(expr) - 1:
        expr = expr[1:-1].strip()
    return expr


def _split(expr: bytes, op: bytes) -> list[bytes]:
    """``expr`` split at ``op`` outside brackets."""
    parts, depth, last = [], 0, 0
    for m in re.finditer(rb"[()\[\]{}]|" + re.escape(op), expr):
        t = m.group()
        if t in (b"(", b"[", b"{"):
            depth += 1
        elif t in (b")", b"]", b"}"):
            depth -= 1
        elif depth == 0:
            parts.append(expr[last : m.start()])
            last = m.end()
    parts.append(expr[last:])
    return [_unparen(p) for p in parts]


def _match(data: bytes, at: int, opener: bytes, closer: bytes) -> int:
    """Offset of the bracket closing the one at ``at``, or -1."""
    depth = 0
    for m in re.compile(re.escape(opener) + b"|" + re.escape(closer)).finditer(data, at):
        depth += 1 if m.group() == opener else -1
        if depth == 0:
            return m.start()
    return -1

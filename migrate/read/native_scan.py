"""What the shared (CPU-side) kernels of aten/src/ATen/native do, by a byte scan.

For a header: the dispatch stubs it declares.  For a .cpp: per function, the
stubs it reaches for an MPS tensor (called, or passed to a helper, directly or
through same-file helpers) and the ``at::`` functions it calls (a kernel that
calls another operator and reaches no stub is a composite wrapper).  A stub
reached only inside ``if (cond)`` where ``cond`` holds only on another device
(``x.is_cpu()``, ``DeviceType::CUDA == ...``, or a same-file predicate that
returns false off that device) is not reached for MPS.
"""
from __future__ import annotations

import re

_DECLARE_DISPATCH = re.compile(rb"\bDECLARE_DISPATCH\s*\(\s*[^;]*?,\s*(\w+)\s*\)")
_STUB = re.compile(rb"\b(\w+_stub)\b")
_AT_CALL = re.compile(rb"\bat::(?!native::)(?:_ops::)?(\w+)\s*[(<]")
_CALL = re.compile(rb"\b(\w+)\s*\(")
_IMPL_HEAD = re.compile(rb"^TORCH_IMPL_FUNC\((\w+)\)|^[A-Za-z_][\w:<>,&* ]*?\b(\w+)\s*\([^;{]*\)\s*(?:const\s*)?\{", re.M)
_IF = re.compile(rb"\bif\s*\(")
_OTHER_DEVICE = rb"(?:cpu|cuda|xpu|hip|meta)"
_DEVICE_TEST = re.compile(  # a condition that holds only on a named non-MPS device
    rb"(?<![!\w])[\w.()\->]*\.is_" + _OTHER_DEVICE + rb"\(\)"
    rb"|==\s*(?:c10::)?(?:DeviceType::|k)(?i:" + _OTHER_DEVICE + rb")\b"
    rb"|(?:c10::)?(?:DeviceType::|k)(?i:" + _OTHER_DEVICE + rb")\s*==")
_REQUIRES_DEVICE = re.compile(  # a predicate's "not that device: return false"
    rb"if\s*\(\s*!\s*[\w.()\->]*\.is_" + _OTHER_DEVICE + rb"\(\)\s*\)\s*\{?\s*return\s+false")


def scan_native_file(rel: str, data: bytes) -> tuple[tuple, tuple]:
    """((stub, line) declared by a header, (function, stubs, at_calls) defined in a .cpp)."""
    if rel.endswith(".h"):
        return tuple((m.group(1).decode(), data.count(b"\n", 0, m.start()) + 1)
                     for m in _DECLARE_DISPATCH.finditer(data)), ()
    heads = list(_IMPL_HEAD.finditer(data))
    bodies: dict[str, list[bytes]] = {}
    for m in heads:
        open_at = data.find(b"{", m.end() - 1)
        close = _match(data, open_at, b"{", b"}") if open_at >= 0 else -1
        body = data[open_at: close + 1] if close > 0 else b""
        bodies.setdefault((m.group(1) or m.group(2)).decode(), []).append(body)
    predicates = {name for name, bs in bodies.items() if any(_REQUIRES_DEVICE.search(b) for b in bs)}
    direct = {name: {s.decode() for b in bs for s in _reached_stubs(b, predicates)} for name, bs in bodies.items()}
    calls = {name: {c.decode() for b in bs for c in _CALL.findall(b)} & bodies.keys() for name, bs in bodies.items()}
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


def _reached_stubs(body: bytes, predicates: set[str]):
    for m in _STUB.finditer(body):
        if not _off_mps(body, m.start(), predicates):
            yield m.group(1)


def _off_mps(body: bytes, pos: int, predicates: set[str]) -> bool:
    """Does ``pos`` lie in the block of an ``if`` whose condition holds only on another device?"""
    for m in _IF.finditer(body, 0, pos):
        close = _match(body, m.end() - 1, b"(", b")")
        if close < 0 or close > pos:
            continue
        rest = body[close + 1:]
        stripped = rest.lstrip()
        block_start = close + 1 + len(rest) - len(stripped)
        if stripped[:1] == b"{":
            block_end = _match(body, block_start, b"{", b"}")
        else:
            block_end = body.find(b";", block_start)
        if not (block_start <= pos < block_end):
            continue
        cond = body[m.end(): close]
        if _DEVICE_TEST.search(cond) or any(c.decode() in predicates for c in _CALL.findall(cond)):
            return True
    return False


def _match(data: bytes, at: int, opener: bytes, closer: bytes) -> int:
    """Offset of the bracket closing the one at ``at``, or -1."""
    depth = 0
    for m in re.compile(re.escape(opener) + b"|" + re.escape(closer)).finditer(data, at):
        depth += 1 if m.group() == opener else -1
        if depth == 0:
            return m.start()
    return -1

"""The operands of the TensorIterator a shared CPU kernel builds, by the kernel's parameter names.

A port registers its kernel for the stub the CPU kernel calls, so the kernel sees that iterator's
inputs in that iterator's order: ``log_sigmoid_backward_cpu_out(grad_output, input, buffer, ...)``
builds (input, buffer, grad_output), three inputs where the graph read two.  Read from the kernel's
definition in the tree's native ``.cpp`` files (port time only; lint never reads them this way).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from migrate.source import SourceFile

_ADD = re.compile(rb"\.\s*add_(?:owned_)?(?:const_)?input\s*\(\s*(\w+)\s*\)")
_OP = re.compile(rb"\bTensorIterator\s*::\s*(?:borrowing_)?(unary|binary)(?:_float)?_op\s*\(([^()]*)\)")
_NATIVE = "aten/src/ATen/native"


@lru_cache(maxsize=64)
def _definition(root: str, kernel: str) -> tuple[list[str], bytes] | None:
    """(parameter names, body) of the non-structured native definition of ``kernel``."""
    head = re.compile(rb"\b" + re.escape(kernel.encode()) + rb"\s*\(([^()]*)\)\s*\{")
    native = Path(root) / _NATIVE
    if not native.is_dir():
        return None
    for f in sorted(native.glob("*.cpp")):
        data = f.read_bytes()
        if kernel.encode() not in data:
            continue
        code = SourceFile(data).code  # comments and strings blanked, offsets kept
        m = head.search(code)
        if m is None:
            continue
        params = [p.split()[-1].lstrip(b"&*").decode() for p in m.group(1).split(b",") if p.split()]
        depth, i = 0, m.end() - 1
        for j in range(i, len(code)):
            depth += (code[j] == 0x7B) - (code[j] == 0x7D)
            if depth == 0:
                return params, code[i:j + 1]
    return None


def iterator_inputs(root, kernel: str) -> list[str] | None:
    """Names of the inputs, in order, of the iterator ``kernel`` builds; None when not read."""
    got = _definition(str(root), kernel)
    if got is None:
        return None
    _, body = got
    names = [m.group(1).decode() for m in _ADD.finditer(body)]
    if names:
        return names
    m = _OP.search(body)
    if m is None:
        return None
    args = [a.strip().decode() for a in m.group(2).split(b",")]
    return args[1:] if all(re.fullmatch(r"\w+", a) for a in args) else None


def positions(root, kernel: str) -> list[int] | None:
    """The iterator's inputs as positions in the kernel's parameter list (schema order)."""
    got = _definition(str(root), kernel)
    names = iterator_inputs(root, kernel)
    if got is None or names is None or any(n not in got[0] for n in names):
        return None
    return [got[0].index(n) for n in names]

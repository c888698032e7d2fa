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
from migrate.source.literal_search import closing_brace

_ADD = re.compile(rb"\.\s*add_(?:owned_)?(?:const_)?input\s*\(\s*\*?\s*(\w+)\s*\)")  # (*min): an optional's tensor
_OP = re.compile(rb"\bTensorIterator\s*::\s*(?:borrowing_)?(unary|binary)(?:_float)?_op\s*\(([^()]*)\)")
# a structured op's meta function: build_borrowing_binary_op(maybe_get_output(), self_or_result, grad_output)
_BUILD = re.compile(rb"\bbuild_(?:borrowing_)?\w*?_op\s*\(\s*maybe_get_output\s*\(\s*\)\s*,([^()]*)\)")
_NATIVE = "aten/src/ATen/native"
_WORD_BYTE = re.compile(rb"\w")


def _heads(kernel: str, meta: tuple[str, str] | None) -> list[bytes]:
    """Regexes of the definitions to read, best first: the kernel, then its structured meta function.  Each
    starts with its literal name (the regex engine then finds candidates at C speed; a leading ``\\b`` made it
    try every byte of ~4 MB of native code per lookup): _definition checks the word boundary."""
    heads = [re.escape(kernel.encode()) + rb"\s*\(([^()]*)\)\s*\{"]
    if meta is not None:
        name, overload = (re.escape(x.encode()) for x in meta)
        plain = rb"TORCH_META_FUNC\s*\(\s*" + name + rb"\s*\)\s*\(([^()]*)\)\s*\{"
        named = rb"TORCH_META_FUNC2\s*\(\s*" + name + rb"\s*,\s*" + overload + rb"\s*\)\s*\(([^()]*)\)\s*\{"
        heads += [named, plain] if overload else [plain, named]  # clamp.Tensor_out's own meta before clamp's
    return heads


@lru_cache(maxsize=4)
def _native_files(root: str) -> tuple[tuple[str, bytes], ...]:
    """The tree's native .cpp files (name, bytes), read once per tree for every definition looked up."""
    native = Path(root) / _NATIVE
    if not native.is_dir():
        return ()
    return tuple((f.name, f.read_bytes()) for f in sorted(native.glob("*.cpp")))


@lru_cache(maxsize=None)  # a modern tree has ~130 native .cpp files: a port of every family reads most of them
def _code(root: str, name: str) -> bytes:
    """A native file with comments and strings blanked, offsets kept (scrubbed once per file)."""
    return SourceFile(dict(_native_files(root))[name]).code


@lru_cache(maxsize=256)
def _definition(root: str, head: bytes, needle: bytes) -> tuple[list[str], bytes] | None:
    """(parameter names, body) of the first definition matching ``head`` in the tree's native .cpp files."""
    pattern = re.compile(head)
    for name, data in _native_files(root):
        if needle not in data:
            continue
        code = _code(root, name)
        m = next(
            (m for m in pattern.finditer(code) if m.start() == 0 or not _WORD_BYTE.match(code, m.start() - 1)), None
        )
        if m is None:
            continue
        params = [p.split()[-1].lstrip(b"&*").decode() for p in m.group(1).split(b",") if p.split()]
        close = closing_brace(code, m.end() - 1)
        if close is not None:
            return params, code[m.end() - 1 : close + 1]
    return None


def _inputs(body: bytes) -> list[str] | None:
    # several builds (clamp's meta: (self, min, max), (self, min) or (self, max) by the bounds given): each
    # operand once, in the order of the first build naming it -- the widest build's order for these
    names = list(dict.fromkeys(m.group(1).decode() for m in _ADD.finditer(body)))
    if names:
        return names
    m = _OP.search(body) or _BUILD.search(body)
    if m is None:
        return None
    args = [a.strip().decode() for a in m.group(m.lastindex).split(b",")]
    if m.re is _OP:
        args = args[1:]  # TensorIterator::binary_op(out, a, b)
    return args if all(re.fullmatch(r"\w+", a) for a in args) else None


def _read(root, kernel: str, meta: tuple[str, str] | None) -> tuple[list[str], list[str]] | None:
    """(parameter names, iterator input names) of the first definition that builds the iterator."""
    needle = (meta[0] if meta else kernel).encode()
    for i, head in enumerate(_heads(kernel, meta)):
        got = _definition(str(root), head, kernel.encode() if i == 0 else needle)
        names = _inputs(got[1]) if got is not None else None
        if names is not None:
            return got[0], names
    return None


def iterator_inputs(root, kernel: str, meta: tuple[str, str] | None = None) -> list[str] | None:
    """Names of the inputs, in order, of the iterator ``kernel`` builds (or, for a structured kernel,
    its meta function ``meta`` = (op name, overload) builds); None when not read."""
    got = _read(root, kernel, meta)
    return got[1] if got is not None else None


def positions(root, kernel: str, meta: tuple[str, str] | None = None) -> list[int] | None:
    """The iterator's inputs as positions in the kernel's parameter list (schema order)."""
    got = _read(root, kernel, meta)
    if got is None or any(n not in got[0] for n in got[1]):
        return None
    return [got[0].index(n) for n in got[1]]


def meta_of(entry) -> tuple[str, str] | None:
    """(op name, overload) of a structured entry's meta function: TORCH_META_FUNC(name) or
    TORCH_META_FUNC2(name, overload of the functional variant)."""
    if not getattr(entry, "structured", False):
        return None
    return entry.name, re.sub(r"_?out$", "", entry.overload)


def ranks(pos: list[int]) -> list[int]:
    """Positions in a parameter list -> order among those inputs ([2, 0] -> [1, 0])."""
    order = sorted(pos)
    return [order.index(p) for p in pos]


def _body(root, kernel: str) -> bytes | None:
    """The body of ``kernel``: a structured TORCH_IMPL_FUNC or a plain definition."""
    heads = [
        rb"\bTORCH_IMPL_FUNC\s*\(\s*" + re.escape(kernel.encode()) + rb"\s*\)\s*\(([^()]*)\)\s*\{",
        _heads(kernel, None)[0],
    ]
    for head in heads:
        got = _definition(str(root), head, kernel.encode())
        if got is not None:
            return got[1]
    return None


def calls_stub_on_its_iterator(root, kernel: str, stub: str) -> bool:
    """``kernel`` is a structured kernel that runs ``stub`` on its own iterator, ``stub(device_type(), *this,
    ...)``: what it computes is the stub's computation. Plain kernels are not judged: index_add_cpu_out calls
    add_stub(iter.device_type(), iter, alpha) too, on a slice iterator per index."""
    body = _body(root, kernel)
    if body is None:
        return False
    own = rb"device_type\s*\(\s*\)\s*,\s*\*\s*this\s*[,)]"
    return re.search(rb"\b" + re.escape(stub.encode()) + rb"\s*\(\s*" + own, body) is not None


def negated_scalars(root, kernel: str, stub: str) -> list[str]:
    """Scalar arguments ``kernel`` (a structured TORCH_IMPL_FUNC or a plain definition) passes to ``stub``
    negated: sub_out calls add_stub(device_type(), *this, -alpha) -> ["alpha"]."""
    body = _body(root, kernel)
    m = re.search(rb"\b" + re.escape(stub.encode()) + rb"\s*\(([^;]*)\)\s*;", body) if body is not None else None
    if m is None:
        return []
    return [a.group(1).decode() for a in re.finditer(rb",\s*-\s*(\w+)\s*(?=,|$)", m.group(1))]


def definition(root, kernel: str) -> tuple[list[tuple[str, str]], str, int] | None:
    """((type, name) of each parameter, the body's text between its braces as written, the body's first
    line) of ``kernel``: a structured TORCH_IMPL_FUNC or a plain definition; None when not found."""
    name = re.escape(kernel.encode())
    heads = [rb"\bTORCH_IMPL_FUNC\s*\(\s*" + name + rb"\s*\)\s*\(([^()]*)\)\s*\{", _heads(kernel, None)[0]]
    for head in heads:
        pattern = re.compile(head)
        for fname, data in _native_files(str(root)):
            if kernel.encode() not in data:
                continue
            code = _code(str(root), fname)
            m = pattern.search(code)
            if m is None:
                continue
            params = []
            for p in m.group(1).split(b","):
                words = p.replace(b"&", b" ").replace(b"*", b" ").split()
                if len(words) >= 2:
                    params.append((b" ".join(words[:-1]).decode(), words[-1].decode()))
            open_at = m.end() - 1
            close = closing_brace(code, open_at)
            if close is not None:
                return params, data[open_at + 1 : close].decode("utf-8", "replace"), data.count(b"\n", 0, open_at) + 1
    return None

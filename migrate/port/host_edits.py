"""The edits a port makes around its kernel: the host stub and its ``REGISTER_DISPATCH`` line, the kernel
file's registration lines, the includes they need, a ufunc op's structured kernel calling its stub; and the
stub's declared signature they are checked against."""

from __future__ import annotations

import re
from functools import lru_cache

from migrate.index import Index
from migrate.model import Edit, HostFile
from migrate.port.emit import Plan
from migrate.port.locate import Impl
from migrate.conventions.target import KIND
from migrate.port.text_edits import line_end
from migrate.port.translate import PortBlocked
from migrate.source import SourceFile
from migrate.source.macros import expand, find_invocations, find_macros
from migrate.source.params import split_params


def host_stub_edits(
    ix: Index,
    hpath: str,
    hf: HostFile,
    arity: int,
    name: str,
    stub: str,
    alpha: str | None = None,
    body: str | None = None,
    extra: list[str] = (),
) -> list[Edit]:
    """The host stub: the file's one-name registration macro, else a ``static void`` calling
    ``lib.exec_*_kernel(iter, "name"[, alpha])`` plus ``REGISTER_DISPATCH`` (``body`` replaces the call)."""
    data = ix.tree.sources[hpath]
    helper = f"exec_{KIND[arity]}_kernel"
    macros = find_macros(SourceFile(data))
    ti = [
        r
        for r in hf.registrations
        if r.via_macro
        and r.via_macro in macros
        and helper in macros[r.via_macro].text
        and len(macros[r.via_macro].params) == 1
    ]
    if ti and alpha is None and body is None:
        last = max(ti, key=lambda r: r.span.end)
        pos = line_end(data, last.span.end)
        return [Edit(hpath, pos, pos, f"{last.via_macro}({name});\n")]
    calls = [k for k in hf.kernel_calls if k.shared_library and k.helper == helper]
    # the file's first ternary stub follows its binary ones: the same library, after the last of them
    calls = calls or [k for k in hf.kernel_calls if k.shared_library and k.helper.startswith("exec_")]
    last_call = max(calls, key=lambda k: k.span.end)
    text = data[last_call.span.start : last_call.span.end].decode()
    receiver = text[: text.index("." + helper)].split()[-1] if "." + helper in text else "lib"
    receiver = receiver if receiver.isidentifier() else "lib"
    fn = next((f for f in hf.functions if f.name == last_call.function), None)
    if fn is not None and fn.kind != "macro":
        pos = line_end(data, fn.span.end - 1)
    else:  # stubs made by a registration macro: after its last invocation
        pos = line_end(data, max(r.span.end for r in hf.registrations) - 1)
    stub_fn = f"{name}_mps_kernel"
    from migrate.port.stub_types import iterator_param, scalar_param

    it = iterator_param(ix, stub)
    params = ", ".join([f"{it} iter"] + ([scalar_param(ix, stub, alpha)] if alpha else []) + list(extra))
    call = body or f'  {receiver}.{helper}(iter, "{name}"{", " + alpha if alpha else ""});\n'
    edits = [Edit(hpath, pos, pos, f"\nstatic void {stub_fn}({params}) {{\n{call}}}\n")]
    regs = [r for r in hf.registrations if not r.via_macro and r.macro == "REGISTER_DISPATCH"]
    if regs and max(r.span.end for r in regs) > pos:
        rpos = line_end(data, max(r.span.end for r in regs) - 1)
        edits.append(Edit(hpath, rpos, rpos, dispatch_line(data, regs, stub, stub_fn)))
    else:
        edits[0] = Edit(hpath, pos, pos, edits[0].replacement + dispatch_line(data, regs, stub, stub_fn))
    return edits


def dispatch_line(data: bytes, regs, stub: str, fn: str) -> str:
    """``REGISTER_DISPATCH(stub, &fn)`` written the way the file's last one is (``&``, trailing ``;``)."""
    amp, semi = "&", ""
    if regs:
        last = max(regs, key=lambda r: r.span.end)
        text = data[last.span.start : line_end(data, last.span.end - 1)].decode("utf-8", "replace")
        amp = "&" if "&" in text else ""
        semi = ";" if text.rstrip().endswith(";") else ""
    return f"REGISTER_DISPATCH({stub}, {amp}{fn}){semi}\n"


@lru_cache(maxsize=32)
def _convenience_macros(data: bytes, macro_kind: str) -> list[tuple[str, frozenset]]:
    """One-parameter #defines of the file and the (in, out) pairs they register for a NAME."""
    macros = find_macros(SourceFile(data))
    base = re.compile(rf"\bREGISTER_{macro_kind}_OP\(\s*__PORT__\s*,\s*(\w+)\s*,\s*(\w+)\s*\)")
    other = re.compile(r"\bREGISTER_(\w+)\(\s*__PORT__\b")
    out = []
    for name, m in macros.items():
        if len(m.params) != 1 or not name.startswith("REGISTER_"):
            continue
        text = expand(m, (b"__PORT__",), macros).decode("latin-1")
        pairs = frozenset(base.findall(text))
        extra = {k for k in other.findall(text) if k != f"{macro_kind}_OP" and "CASTOUT" not in k}
        if pairs and not extra:
            out.append((name, pairs))
    return sorted(out, key=lambda x: (-len(x[1]), x[0]))


def registration_lines(data: bytes, arity: int, name: str, plan: Plan, alpha: bool = False) -> list[str]:
    """The file's own convenience macros where they fit exactly, then single registrations.
    Alpha kernels: ``REGISTER_*_ALPHA_OP(name, in, alpha, out)``, alpha in the input dtype (the
    host passes it in ``iter.common_dtype()``)."""
    kind = KIND[arity].upper()
    wanted = plan.pairs()
    if alpha:
        return [f"REGISTER_{kind}_ALPHA_OP({name}, {i}, {i}, {o});" for i, o in wanted]
    left = set(wanted)
    lines = []
    for macro, pairs in _convenience_macros(data, kind):
        if pairs <= left:
            lines.append(f"{macro}({name});")
            left -= pairs
    lines += [f"REGISTER_{kind}_OP({name}, {i}, {o});" for i, o in wanted if (i, o) in left]
    return lines


_USING = re.compile(rb"\busing\s+(\w+)\s*=\s*void\s*\(\s*\*\s*\)\s*\(([^;]*)\)\s*;")


_TYPEDEF = re.compile(rb"\btypedef\s+void\s*\(\s*\*\s*(\w+)\s*\)\s*\(([^;]*)\)\s*;")


def stub_params(ix: Index, stub: str) -> list[str] | None:
    """Parameter types of ``stub``'s function type after the iterator (None: not declared, not a
    TensorIterator stub, or a type the reader does not follow)."""
    extra = _stub_signature(ix, stub)
    return None if extra and extra[0].startswith("<not a TensorIterator") else extra


def stub_function_params(ix: Index, stub: str) -> list[str] | None:
    """Every parameter type of ``stub``'s function type, from its DECLARE_DISPATCH header (None: not
    declared in the tree, or a type the reader does not follow)."""
    decl = ix.tree.declared_stubs.get(stub)
    if decl is None:
        return None
    try:
        data = (ix.tree.root / decl.path).read_bytes()
    except OSError:
        return None
    fn_type = _declared_type(data, stub)
    if fn_type is None:
        return None
    inline = re.fullmatch(rb"void\s*\(\s*\*\s*\)\s*\((.*)\)", fn_type, re.S)
    if inline is not None:  # DECLARE_DISPATCH(void (*)(TensorIteratorBase&, std::optional<double>), stub)
        return split_params(inline.group(1))
    fn_type = fn_type.rsplit(b"::", 1)[-1]
    for rx in (_USING, _TYPEDEF):
        for u in rx.finditer(data):
            if u.group(1) == fn_type:
                return split_params(u.group(2))
    return None


def _declared_type(data: bytes, stub: str) -> bytes | None:
    """The first argument of ``DECLARE_DISPATCH(TYPE, stub)`` in ``data`` (the source layer's invocations)."""
    for inv in find_invocations(SourceFile(data), {"DECLARE_DISPATCH"}):
        if len(inv.args) >= 2 and inv.args[-1].decode() == stub:
            return b", ".join(inv.args[:-1])
    return None


def _stub_signature(ix: Index, stub: str) -> list[str] | None:
    """Parameter types of ``stub``'s function type after the iterator (None: not declared in the tree,
    or a type the reader does not follow)."""
    parts = stub_function_params(ix, stub)
    if parts is None:
        return None
    if not parts or "TensorIterator" not in parts[0]:
        return ["<not a TensorIterator stub: (" + ", ".join(parts) + ")>"]
    return parts[1:]


def check_stub_takes(ix: Index, stub: str, alpha: str | None, where: str | None) -> None:
    extra = _stub_signature(ix, stub)
    if extra is None:
        return
    if extra and extra[0].startswith("<not a TensorIterator"):
        raise PortBlocked(
            f"{stub} takes {extra[0][len('<not a TensorIterator stub: ') : -1]}, not a TensorIterator: "
            f"an elementwise kernel cannot implement it",
            "stub signature",
            where,
        )
    scalar = len(extra) == 1 and "Scalar" in extra[0].replace("&", " ").replace("::", " ").split()
    if alpha is not None and not scalar:
        raise PortBlocked(
            f"{stub} takes ({', '.join(['TensorIteratorBase&'] + extra)}), not one Scalar for "
            f"the graph's run-time scalar {alpha}",
            "stub signature",
            where,
        )
    if alpha is None and extra:
        raise PortBlocked(
            f"{stub} also takes {', '.join(extra)}, which the graph does not use", "stub signature", where
        )


_NATIVE_INCLUDE = re.compile(rb"^#include <ATen/native/[^>]+>[^\n]*\n", re.M)


_ANY_INCLUDE = re.compile(rb"^#include [<\"][^>\"]+[>\"][^\n]*\n", re.M)
_FIRST_CODE = re.compile(rb"^(?:namespace|using|static|template|TORCH_IMPL_FUNC|Tensor)\b", re.M)


def with_stub_header(ix: Index, edits: list[Edit], stub: str) -> list[Edit]:
    """``edits`` plus the ``#include`` of the header declaring ``stub`` in the host file that registers it,
    when that file does not include it yet (UnaryKernel.mm includes UnaryOps.h, not Activation.h)."""
    decl = ix.tree.declared_stubs.get(stub)
    host = next((e.path for e in edits if f"REGISTER_DISPATCH({stub}," in e.replacement), None)
    if decl is None or host is None or not decl.path.startswith("aten/src/"):
        return edits
    return with_include(ix, edits, host, decl.path.removeprefix("aten/src/"))


def with_include(ix: Index, edits: list[Edit], host: str, header: str) -> list[Edit]:
    """``edits`` plus ``#include <header>`` in ``host`` (at its alphabetical place among the ATen/native includes
    for such a header, else among all includes) when the file does not include it yet."""
    line = f"#include <{header}>\n".encode()
    whole = next((e for e in edits if e.path == host and e.start == 0 and e.end == len(ix.tree.sources[host])), None)
    data = whole.replacement.encode("utf-8", "surrogateescape") if whole else ix.tree.sources[host]
    if f"<{header}>".encode() in data:
        return edits
    head = _FIRST_CODE.search(data)  # the file's include block: includes further down sit in #if branches
    limit = head.start() if head else len(data)
    native = (header.startswith("ATen/native/") and list(_NATIVE_INCLUDE.finditer(data, 0, limit))) or list(
        _ANY_INCLUDE.finditer(data, 0, limit)
    )
    if not native:
        return edits
    later = next((m for m in native if m.group(0) > line), None)  # the block's alphabetical place
    pos = later.start() if later else native[-1].end()
    if whole is not None:
        text = (data[:pos] + line + data[pos:]).decode("utf-8", "surrogateescape")
        return [e if e is not whole else Edit(host, 0, whole.end, text) for e in edits]
    return edits + [Edit(host, pos, pos, line.decode())]


def ufunc_body_edits(ix: Index, im: Impl, stub: str) -> list[Edit]:
    """The MPS structured kernel's body becomes the stub's call with the kernel's Scalar arguments, as
    codegen's ``ufunc_<op>_CPU`` body is (a complex branch goes with the rest: _complex_paths says so)."""
    from migrate.port.locate import function_text, scalar_params
    from migrate.source.params import definition_params

    fn = im.function
    data = ix.tree.sources[fn.path]
    code = SourceFile(data).code
    open_, close = code.find(b"{", fn.span.start), code.rfind(b"}", fn.span.start, fn.span.end)
    if not (fn.span.start <= open_ < close):
        raise PortBlocked(f"{fn.name}: no body to replace with {stub}'s call", "ufunc body", fn.span.where)
    args = ", ".join(["device_type()", "*this", *scalar_params(definition_params(*function_text(ix, fn)))])
    return [Edit(fn.path, open_, close + 1, f"{{\n  {stub}({args});\n}}")]

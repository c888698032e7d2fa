"""Find the Metal source of a family's kernel in a tree (optionally patched).

family -> host stub (REGISTER_DISPATCH of the family's stub) -> the
``lib.exec_*_kernel(iter, "name")`` call in it (``KernelCall.name``, arity
from the helper) -> ``Index.functor_registrations[name]`` -> the .metal file.
"""

from __future__ import annotations

import shutil
import tempfile
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from migrate.errors import UsageError
from migrate.index import Index
from migrate.model import KernelCall, KernelRegistration
from migrate.tables import load_table
from migrate.tree import C10_METAL_REL, load_tree


@dataclass
class KernelSource:
    family: str
    name: str  # host-side kernel name prefix (KernelCall.name)
    helper: str  # exec_binary_kernel, ...
    arity: int
    path: str  # the .metal file (tree-relative)
    text: str  # the source compiled: the file, other ops' registrations blanked out
    registrations: list[KernelRegistration]
    include_dirs: list[Path] = field(default_factory=list)
    call_site: str = ""
    notes: list[str] = field(default_factory=list)
    convention: str = "functor_registry"  # rules/launch_conventions.yaml
    site: object = None  # conventions.Site of the older conventions
    input_dtypes: list | None = None  # older conventions: what the exported host names cover
    template: str = ""  # unary_inline_template: the fmt source the library is built from
    operand_order: list[int] | None = None  # the CPU iterator's inputs by schema rank, when not the schema's order


def operand_order(ix: Index, family: str) -> list[int] | None:
    """The order in which the iterator of the family's shared CPU kernel (or its structured meta function)
    hands the inputs to the stub, as ranks of the schema's tensor inputs; None when it is the schema's
    order or not read. leaky_relu_backward's meta builds (self_or_result, grad_output): [1, 0]."""
    from migrate.conventions.cpu_iter import meta_of, positions, ranks

    for e in ix.families.get(family, ()):
        line = e.kernel_for("CPU")
        if line is None or line is not e.kernel_for("MPS"):
            continue  # the family's shared line: CPU's and MPS's kernel
        pos = positions(ix.tree.root, line.kernel_name, meta_of(e))
        if pos is not None and len(set(pos)) == len(pos):
            order = ranks(pos)
            return order if order != sorted(order) else None
    return None


# One stub of several (div's div_trunc_stub): verify looks only at the kernel registered for it.
ONLY_STUB: ContextVar[str | None] = ContextVar("ONLY_STUB", default=None)


def _stub_names(ix: Index, family: str) -> list[str]:
    if ONLY_STUB.get() is not None:
        return [ONLY_STUB.get()]
    names = [f"{family}_stub"]
    for e in ix.families.get(family, ()):
        for d in e.dispatch:
            names += ix.stubs_of_shared_kernel(d.kernel_name)
    return list(dict.fromkeys(names))


def find_kernel_call(ix: Index, family: str) -> KernelCall:
    arity = load_table("verify.yaml")["arity"]
    calls = [c for hf in ix.tree.hosts.values() for c in hf.kernel_calls if c.helper in arity and c.name]
    for stub in _stub_names(ix, family):
        for reg in ix.registrations.get(stub, ()):
            found = [c for c in calls if c.function == reg.function]
            if found:
                return found[0]
    # by the family's name only when no one stub is asked for (clamp_scalar_stub's launch is not clamp_stub's)
    found = [c for c in calls if c.name == family] if ONLY_STUB.get() is None else []
    if found:
        return found[0]
    raise UsageError(f"no native Metal kernel call (exec_unary/binary/ternary_kernel) found for {family!r}")


def locate_error(call: KernelCall) -> UsageError:
    return UsageError(
        f'{call.helper}(iter, "{call.name}") has no REGISTER_* registration in any .metal file',
        call.path,
        call.span.line,
    )


def _blank_other_registrations(text: bytes, keep: str, regs) -> bytes:
    out = bytearray(text)
    for r in regs:
        if r.op != keep:
            out[r.span.start : r.span.end] = b" " * (r.span.end - r.span.start)
    return bytes(out)


def headers_root(tree_root: Path, overlay: dict[str, bytes], tmp: Path) -> Path | None:
    """A folder holding c10/metal with the patch's header changes, or None (unchanged)."""
    changed = {p: d for p, d in overlay.items() if p.startswith(C10_METAL_REL + "/")}
    if not changed:
        return None
    from migrate.device.cpu.backend import torch_include_dir

    src = tree_root if (tree_root / C10_METAL_REL).is_dir() else torch_include_dir()
    dst = tmp / "headers"
    if src is not None:
        shutil.copytree(src / C10_METAL_REL, dst / C10_METAL_REL)
    for p, d in changed.items():
        f = dst / p
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(d)
    return dst


def locate(
    root: Path,
    family: str,
    overlay: dict[str, bytes] | None = None,
    workdir: Path | None = None,
    index: Index | None = None,
) -> KernelSource:
    """The family's kernel source; ``index``: the tree at ``root`` with ``overlay`` already read."""
    overlay = overlay or {}
    ix = index if index is not None else Index(load_tree(root, overlay=overlay))
    tree = ix.tree
    call = find_kernel_call(ix, family)
    arity = load_table("verify.yaml")["arity"][call.helper]
    regs = ix.functor_registrations.get(call.name)
    if not regs:
        raise locate_error(call)
    path = regs[0].path
    data = overlay.get(path, tree.sources.get(path))
    if data is None:
        data = (root / path).read_bytes()
    all_regs = tree.metals[path].registrations if path in tree.metals else regs
    text = _blank_other_registrations(data, call.name, all_regs).decode("utf-8", errors="replace")
    return KernelSource(
        family,
        call.name,
        call.helper,
        arity,
        path,
        text,
        [r for r in regs if r.path == path],
        include_dirs(root, overlay, workdir),
        f"{call.path}:{call.span.line}",
    )


def include_dirs(root: Path, overlay: dict[str, bytes], workdir: Path | None) -> list[Path]:
    """The patch's c10/metal headers (if it changes any), then the tree's aten/src."""
    dirs: list[Path] = []
    workdir = workdir or Path(tempfile.mkdtemp(prefix="mps-migrate-verify-"))
    hdr = headers_root(root, overlay, workdir)
    if hdr is not None:
        dirs.append(hdr)
    if (root / "aten" / "src").is_dir():
        dirs.append(root / "aten" / "src")
    return dirs

"""Which launch convention a tree's target files (the elementwise kernel and host files a port writes into)
are written in, read from the files themselves.

``functor_registry``: modern ``c10/metal`` functors registered with ``REGISTER_*_OP`` and launched by
``lib.exec_*_kernel(iter, "name")``.  ``unary_1d`` (2.7-era UnaryKernel): a template kernel plus the
file's kind of ``[[host_name]]`` instantiation macro, launched by ``lib.exec_unary_kernel`` under the
name ``{name}_{out}_{in}``.  ``binary_offsets`` (2.7-era BinaryKernel): a functor registered through the
file's own macro whose host names are those ``binary_mps_impl`` builds.  The kernel names come from
rules/launch_conventions.yaml, the description verify emulates: one description of each convention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from migrate.model import HostFile, MetalFile
from migrate.resources import torch_include_dir
from migrate.source import SourceFile
from migrate.source.macros import expand, find_macros
from migrate.tree import MPS_REL
from migrate.conventions.launch import conventions

# ternary kernels (clamp_stub's (self, min, max)) go beside the binary ones: the same iterator-launched
# elementwise file pair, whose host file already holds the library handle and the binary launch to follow
KERNEL_FILE = {
    1: f"{MPS_REL}/kernels/UnaryKernel.metal",
    2: f"{MPS_REL}/kernels/BinaryKernel.metal",
    3: f"{MPS_REL}/kernels/BinaryKernel.metal",
}
HOST_FILE = {
    1: f"{MPS_REL}/operations/UnaryKernel.mm",
    2: f"{MPS_REL}/operations/BinaryKernel.mm",
    3: f"{MPS_REL}/operations/BinaryKernel.mm",
}
KIND = {1: "unary", 2: "binary", 3: "ternary"}
TERNARY_MACRO = re.compile(rb"^\s*#\s*define\s+REGISTER_TERNARY_OP\s*\(\s*\w+\s*,\s*\w+\s*,\s*\w+\s*\)", re.M)
BFLOAT_GUARD = re.compile(r"^#if __METAL_VERSION__ >= (\d+)\s*$", re.M)


class NoTarget(Exception):
    """The target files fit no convention a port can write in: ``reason``, and ``construct`` for --list."""

    def __init__(self, reason: str, construct: str):
        self.reason, self.construct = reason, construct
        super().__init__(reason)


@dataclass(frozen=True)
class Traits:
    """SFINAE traits the tree's c10/metal/utils.h offers for a functor's floating/integral overloads."""

    floating: str
    integral: str


MODERN_TRAITS = Traits("::c10::metal::is_scalar_floating_point_v", "::c10::metal::is_scalar_integral_v")
METAL_TRAITS = Traits("::metal::is_floating_point_v", "::metal::is_integral_v")


@dataclass(frozen=True)
class Target:
    convention: str  # a key of rules/launch_conventions.yaml
    arity: int
    kpath: str
    mf: MetalFile
    hpath: str
    hf: HostFile
    traits: Traits
    bfloat_guard: str | None  # "#if __METAL_VERSION__ >= 310" where the kernel file guards bfloat
    register_macro: str | None = None  # binary_offsets: the file's macro registering NAME_DTYPE (+ dense)
    impl_call: str | None = None  # binary_offsets: how host stubs call the launcher ("mps::binary_mps_impl")

    @property
    def kind(self) -> str:
        return KIND[self.arity]

    def host_name(self, name: str, out: str, inp: str) -> str:
        return conventions()[self.convention]["kernel"].format(name=name, out=out, **{"in": inp})


def _traits(root: Path, modern: bool) -> Traits:
    """The tree's utils.h decides; a partial tree without it gets its era's (modern: c10/metal's)."""
    try:
        utils = (root / "c10/metal/utils.h").read_bytes()
    except OSError:
        return MODERN_TRAITS if modern else METAL_TRAITS
    return MODERN_TRAITS if b"is_scalar_floating_point_v" in utils else METAL_TRAITS


def _guard(data: bytes) -> str | None:
    m = BFLOAT_GUARD.search(data.decode("utf-8", "replace"))
    return m.group(0).strip() if m else None


def detect(ix, arity: int) -> Target:
    """The convention the tree's target files are written in, or NoTarget saying why none fits."""
    kpath, hpath = KERNEL_FILE[arity], HOST_FILE[arity]
    mf = ix.tree.metals.get(kpath)
    if mf is None:
        raise NoTarget(
            f"{kpath} does not exist (a tree older than native Metal kernels, or not a PyTorch tree)", "no kernel file"
        )
    hf = ix.tree.hosts.get(hpath)
    if hf is None:
        raise NoTarget(f"{hpath} does not exist", "no host file")
    kdata = ix.tree.sources[kpath]
    traits, guard = _traits(ix.tree.root, b"c10/metal/indexing.h" in kdata), _guard(kdata)
    exec_calls = [k for k in hf.kernel_calls if k.shared_library and k.helper == f"exec_{KIND[arity]}_kernel"]
    if arity == 3:
        return _ternary(ix, kpath, mf, hpath, hf, traits, guard, kdata)
    if b"c10/metal/indexing.h" in kdata:
        if not exec_calls:
            raise NoTarget(
                f"{hpath} has no lib.exec_{KIND[arity]}_kernel(iter, ...) stub to follow", "pre-c10/metal host file"
            )
        return Target("functor_registry", arity, kpath, mf, hpath, hf, traits, guard)
    if arity == 1:
        if not exec_calls:
            raise NoTarget(f'{hpath} has no lib.exec_unary_kernel(iter, "name") stub to follow', "no unary launch")
        if "{name}_{out}_{in}" != conventions()["unary_1d"]["kernel"]:  # pragma: no cover - table edited
            raise NoTarget("rules/launch_conventions.yaml unary_1d names another kernel shape", "conventions")
        return Target("unary_1d", 1, kpath, mf, hpath, hf, traits, guard)
    macro = binary_register_macro(kdata)
    if macro is None:
        raise NoTarget(
            f"{kpath} defines no (NAME, DTYPE) macro registering the kernels binary_mps_impl launches",
            "no binary registration macro",
        )
    call = _impl_call(ix.tree.sources[hpath])
    if call is None:
        raise NoTarget(f'{hpath} has no binary_mps_impl(iter, "name") stub to follow', "no binary launch")
    return Target("binary_offsets", 2, kpath, mf, hpath, hf, traits, guard, macro, call)


def _ternary(ix, kpath, mf, hpath, hf, traits, guard, kdata) -> Target:
    """Modern: the tree's c10/metal/indexing.h defines REGISTER_TERNARY_OP(NAME, DTYPEI, DTYPEO) and the host
    file launches through ``lib.exec_*_kernel`` (its first ternary stub follows the binary ones).  2.7: the
    binary file's own launch (binary_mps_impl) is there; the port adds a ternary one in its style
    (migrate/port/ternary_launcher.py)."""
    if b"c10/metal/indexing.h" in kdata:
        where = indexing_header(ix.tree.root)
        if where is None or not TERNARY_MACRO.search(where[1]):
            raise NoTarget(
                f"{where[0] if where else 'c10/metal/indexing.h'} defines no REGISTER_TERNARY_OP(NAME, DTYPEI, DTYPEO)",
                "no ternary registration macro",
            )
        calls = [k for k in hf.kernel_calls if k.shared_library and k.helper.startswith("exec_")]
        if not calls:
            raise NoTarget(f"{hpath} has no lib.exec_*_kernel(iter, ...) stub to follow", "no launch")
        return Target("functor_registry", 3, kpath, mf, hpath, hf, traits, guard)
    call = _impl_call(ix.tree.sources[hpath])
    if call is None:
        raise NoTarget(f'{hpath} has no binary_mps_impl(iter, "name") stub to follow', "no binary launch")
    return Target("ternary_offsets", 3, kpath, mf, hpath, hf, traits, guard, None, call)


def indexing_header(root: Path) -> tuple[str, bytes] | None:
    """(where, text) of the c10/metal/indexing.h kernels compile against: the tree's, else (a partial tree,
    as verify does) the installed torch's."""
    rel = "c10/metal/indexing.h"
    try:
        return rel, (root / rel).read_bytes()
    except OSError:
        pass
    inc = torch_include_dir()
    try:
        return (str(inc / rel), (inc / rel).read_bytes()) if inc is not None else None
    except OSError:
        return None


def binary_register_macro(data: bytes) -> str | None:
    """The file's two-parameter macro whose expansion exports exactly binary_mps_impl's names for NAME, DTYPE."""
    conv = conventions()["binary_offsets"]
    want = {
        conv["kernel"].format(name="__N__", **{"in": "__T__"}),
        conv["dense_kernel"].format(name="__N__", **{"in": "__T__"}),
    }
    macros = find_macros(SourceFile(data))
    for name, m in macros.items():
        if len(m.params) != 2:
            continue
        text = expand(m, (b"__N__", b"__T__"), macros).decode("latin-1")
        names = {"".join(re.findall(r'"([^"]*)"', h)) for h in re.findall(r"host_name\(([^)]*)\)", text)}
        if names == want:
            return name
    return None


_IMPL_CALL = re.compile(rb"^\s*((?:\w+::)*binary_mps_impl)\s*\(\s*iter\s*,\s*\"\w+\"\s*\)\s*;", re.M)


def _impl_call(data: bytes) -> str | None:
    m = _IMPL_CALL.search(data)
    return m.group(1).decode() if m else None

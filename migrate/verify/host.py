"""Emulated host side: which kernel ``MetalShaderLibrary::exec_*_kernel`` picks
and the arguments it binds (modern PyTorch, OperationUtils.mm, 2.10+).

Selection rules (``it`` is the emulated TensorIterator, see iterator.py):

exec_unary_kernel(iter, name)            [no alpha]
  - numel 0: nothing runs.
  - contiguous iterator: ``dense`` (ILP, buffer 2 = numel, ceil(n/4) threads)
    when the output is floating and numel >= 2^18 (or PYTORCH_UNARY_FORCE_FLAVOR
    =ilp), else ``dense_scalar`` (one thread per element).
  - non-contiguous: ``inner_contiguous`` when the library has it, ndim >= 2, the
    first dim is unit-stride for every operand and has >= 16 elements; else
    ``strided`` (sizes, input strides, output strides, ndim; 2-D grid
    [shape[0], numel/shape[0]]).
  - name = <op>_<flavor>_<out>_<in>; if not registered, the castout fallback
    <op>_{dense,strided,inner_contiguous}_castout_<in> (computes in the input
    type, stores through a runtime ScalarType switch).
exec_binary_kernel(iter, name)           [no alpha, natural output = output dtype]
  - numel 0: nothing runs.  0-dim double/complex-double operands become float.
  - cast_needed = input dtypes differ.
  - an operand that is dense-broadcastable into the output but smaller, with
    the other operand and the output contiguous: ``dense_scalar[_lhs]`` if it
    has one element, else ``dense_broadcast[_rhs]`` (buffer 3 = its numel).
    An integral scalar with a float32-backed common dtype equal to the tensor's
    dtype is promoted on the host and the cast is dropped.
  - otherwise contiguous iterator: ``dense`` or ``dense_ilp4`` (float output and
    numel >= 2^18, or PYTORCH_BINARY_FORCE_FLAVOR=ilp; buffer 3 = numel);
    non-contiguous: ``inner_contiguous`` (as unary, when registered) else
    ``strided`` (sizes, out/in/other strides, int4 {ndim, types}).
  - cast kernels: <op>_<flavor>_cast_<out>_<out-or-common-if-bool>, with
    {elem sizes, scalar types} in an int4; non-cast: <op>_<flavor>_<out>_<in>.
exec_ternary_kernel(iter, name)
  - cast_needed = an input dtype differs from input 0's (the output's is not
    compared); <op>_{dense,strided}_<out>_<in>, or <op>_{dense,strided}_cast_<out>;
    dense cast binds uint3 sizes and uint3 types; strided binds sizes, 4 stride
    arrays and ndim, then (the cast kernel's last argument) int4 types.

Binding (mtl_setBuffer): device tensors by pointer at their storage offset;
0-dim CPU tensors by value (setBytes of their bytes, double -> float).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from migrate.verify.dtypes import metal_name, scalar_type
from migrate.verify.iterator import Iter

ILP = 4
ILP_THRESHOLD = 1 << 18
INNER_CONTIGUOUS_MIN_EXTENT = 16
FLOATING = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


@dataclass
class Launch:
    kernel: str
    args: list  # bindable arguments, buffer order
    threads: list[int]
    variant: str = ""  # the flavor, for reports ("dense_scalar", "strided_castout", ...)
    notes: list[str] = field(default_factory=list)
    finish: Callable[[], object] | None = None  # after the kernel: copy a contiguous temporary back


def _i64(values) -> torch.Tensor:
    return torch.tensor(list(values) or [0], dtype=torch.int64)


def _i32(values) -> torch.Tensor:
    return torch.tensor(list(values), dtype=torch.int32)


def bind_tensor(
    t: torch.Tensor, cpu_scalar: bool = False, scalar_read: Callable[[torch.Tensor], torch.Tensor] | None = None
) -> torch.Tensor:
    """What mtl_setBuffer hands the kernel, as a 1-D CPU tensor bound by pointer.

    ``scalar_read`` overrides how a CPU scalar's bytes are read (fault injection:
    the historical ``t.storage().data()`` read ignored the storage offset).
    """
    if cpu_scalar:
        v = scalar_read(t) if scalar_read else t.reshape(1).clone()
        if v.dtype == torch.float64:
            v = v.float()
        elif v.dtype == torch.complex128:
            v = v.to(torch.complex64)
        return v
    if t.dim() == 0:
        return t.unsqueeze(0)  # same pointer; a 1-D view binds by address
    return t


def storage_start_read(t: torch.Tensor) -> torch.Tensor:
    """The pre-fix read of a CPU scalar: element 0 of its storage (#187229)."""
    return torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), 0, (1,), (1,)).clone()


def _convert_double(t: torch.Tensor) -> torch.Tensor:
    if t.dim() == 0 and t.dtype == torch.float64:
        return t.float()
    if t.dim() == 0 and t.dtype == torch.complex128:
        return t.to(torch.complex64)
    return t


def _dense_broadcastable(frm: torch.Tensor, into: torch.Tensor) -> bool:
    if not frm.is_contiguous() or not into.is_contiguous():
        return False
    checking = False
    for d in range(frm.dim()):
        if checking:
            if frm.size(-d - 1) == 1:
                continue
            return False
        checking = frm.size(-d - 1) != into.size(-d - 1)
    return True


def _inner_contiguous(it: Iter) -> bool:
    return it.ndim() >= 2 and not it.is_contiguous() and it.has_contiguous_first_dim()


class Host:
    """Kernel selection against a compiled library's set of host names."""

    def __init__(self, kernel_names, force_flavor: str | None = None, scalar_read=None, alpha: float | None = None):
        self.names = frozenset(kernel_names)
        self.force = force_flavor
        self.scalar_read = scalar_read
        self.alpha = alpha  # exec_*_kernel(iter, name, alpha): the value bound, in the common dtype

    def _alpha(self, it: Iter) -> tuple[str, torch.Tensor]:
        """(the host name's alpha suffix, the bound value): scalar_arg_type defaults to the common dtype."""
        dt = it.common_dtype()
        return f"_{metal_name(dt)}", torch.tensor([self.alpha], dtype=dt)

    def _bound(self, it: Iter) -> list[torch.Tensor]:
        return [bind_tensor(op.tensor, op.cpu_scalar, self.scalar_read) for op in it.operands]

    def _has_prefix(self, prefix: str) -> bool:
        return any(n.startswith(prefix) for n in self.names)

    # ------------------------------------------------------------ unary
    def unary(self, it: Iter, name: str) -> Launch | None:
        n = it.numel()
        if n == 0:
            return None
        if self.alpha is not None:
            return self._unary_alpha(it, name)
        out, inp = it.output(), it.input(0)
        contig = it.is_contiguous()
        ilp = contig and out.dtype in FLOATING and n >= ILP_THRESHOLD
        if contig and self.force in ("ilp", "scalar"):
            ilp = self.force == "ilp"
        inner = (
            not contig
            and it.shape()[0] >= INNER_CONTIGUOUS_MIN_EXTENT
            and _inner_contiguous(it)
            and self._has_prefix(f"{name}_inner_contiguous_")
        )
        flavor = "inner_contiguous" if inner else "strided" if not contig else "dense" if ilp else "dense_scalar"
        kname = f"{name}_{flavor}_{metal_name(out.dtype)}_{metal_name(inp.dtype)}"
        cast = kname not in self.names
        if cast:
            flavor = "inner_contiguous_castout" if inner else "dense_castout" if contig else "strided_castout"
            kname = f"{name}_{flavor}_{metal_name(inp.dtype)}"
        b = self._bound(it)
        ot = scalar_type(out.dtype)
        if flavor == "dense":
            return Launch(kname, [b[0], b[1], _i32([n])], [-(-n // ILP)], flavor)
        if flavor in ("dense_scalar",):
            return Launch(kname, [b[0], b[1]], [n], flavor)
        if flavor == "dense_castout":
            return Launch(kname, [b[0], b[1], _i32([out.element_size(), ot])], [n], flavor)
        shape = it.shape()
        if flavor.startswith("inner_contiguous"):
            packed = [it.ndim() - 1, shape[0]] + ([out.element_size(), ot] if cast else [])
            args = [b[0], b[1], _i64(shape[1:]), _i64(it.strides(1)[1:]), _i64(it.strides(0)[1:]), _i32(packed)]
            return Launch(kname, args, [-(-shape[0] // ILP), n // shape[0]], flavor)
        last = _i32([it.ndim(), ot]) if cast else _i32([it.ndim()])
        args = [b[0], b[1], _i64(shape), _i64(it.strides(1)), _i64(it.strides(0)), last]
        return Launch(kname, args, [shape[0], n // shape[0]], flavor)

    def _unary_alpha(self, it: Iter, name: str) -> Launch:
        """REGISTER_UNARY_ALPHA_OP's kernels: <op>_{dense,strided}_<out>_<in>_<alpha>, no ILP or castout;
        alpha after the tensors (dense) or after ndim (strided)."""
        n, out, inp = it.numel(), it.output(), it.input(0)
        suffix, alpha = self._alpha(it)
        flavor = "dense" if it.is_contiguous() else "strided"
        kname = f"{name}_{flavor}_{metal_name(out.dtype)}_{metal_name(inp.dtype)}{suffix}"
        b = self._bound(it)
        if flavor == "dense":
            return Launch(kname, [b[0], b[1], alpha], [n], flavor)
        shape = it.shape()
        args = [b[0], b[1], _i64(shape), _i64(it.strides(1)), _i64(it.strides(0)), _i32([it.ndim()]), alpha]
        return Launch(kname, args, [shape[0], n // shape[0]], flavor)

    # ----------------------------------------------------------- binary
    def binary(self, it: Iter, name: str) -> Launch | None:
        n = it.numel()
        if n == 0:
            return None
        inp, oth, out = _convert_double(it.input(0)), _convert_double(it.input(1)), it.output()
        cast = inp.dtype != oth.dtype
        in_full, oth_full = inp.numel() == out.numel(), oth.numel() == out.numel()
        in_bc = _dense_broadcastable(inp, out) and not in_full
        oth_bc = _dense_broadcastable(oth, out) and not oth_full
        use_scalar = use_bc = on_lhs = False
        bc_numel = 0
        if in_bc and oth_full and oth.is_contiguous() and out.is_contiguous():
            bc_numel, on_lhs = inp.numel(), True
        elif oth_bc and in_full and inp.is_contiguous() and out.is_contiguous():
            bc_numel, on_lhs = oth.numel(), False
        if bc_numel:
            use_scalar, use_bc = bc_numel == 1, bc_numel != 1
        b = self._bound(it)
        if use_scalar and cast:
            common = it.common_dtype()
            tensor_dt = (oth if on_lhs else inp).dtype
            scalar_dt = (inp if on_lhs else oth).dtype
            real = {torch.complex64: torch.float32}.get(common, common)
            if (
                tensor_dt == common
                and not scalar_dt.is_floating_point
                and not scalar_dt.is_complex
                and real == torch.float32
            ):
                idx = 1 if on_lhs else 2
                b[idx] = b[idx].to(common)
                if on_lhs:
                    inp = inp.to(common)
                else:
                    oth = oth.to(common)
                cast = False
        contig = it.is_contiguous()
        ilp_ok = not use_scalar and not use_bc and contig and not cast and self.alpha is None  # alpha: no ILP
        ilp = ilp_ok and out.dtype in FLOATING and n >= ILP_THRESHOLD
        if ilp_ok and self.force in ("ilp", "scalar"):
            ilp = self.force == "ilp"
        inner = (
            self.alpha is None
            and not use_scalar
            and not use_bc
            and not cast
            and not contig
            and _inner_contiguous(it)
            and it.shape()[0] >= INNER_CONTIGUOUS_MIN_EXTENT
            and self._has_prefix(f"{name}_inner_contiguous_")
        )
        o = metal_name(out.dtype)
        cast_suffix = f"{o}_{metal_name(it.common_dtype()) if out.dtype == torch.bool else o}"
        if use_scalar:
            flavor = "dense_scalar" + ("_lhs" if on_lhs else "")
        elif use_bc:
            flavor = "dense_broadcast" + ("_rhs" if on_lhs else "")
        else:
            flavor = (f"dense_ilp{ILP}" if ilp else "dense") if contig else "inner_contiguous" if inner else "strided"
        tensor_in = (oth if on_lhs else inp) if (use_scalar or use_bc) else inp
        kname = f"{name}_{flavor}_cast_{cast_suffix}" if cast else f"{name}_{flavor}_{o}_{metal_name(tensor_in.dtype)}"
        variant = flavor + ("_cast" if cast else "")
        alpha = None
        if self.alpha is not None:  # REGISTER_BINARY_ALPHA_OP: the same flavors, named with the alpha type
            suffix, alpha = self._alpha(it)
            kname += suffix
        sizes_types = [inp.element_size(), oth.element_size(), scalar_type(inp.dtype), scalar_type(oth.dtype)]
        args = [b[0], b[1], b[2]]
        if alpha is not None and not use_bc:
            args.append(alpha)  # buffer 3, before any sizes (after broadcast_numel for the broadcast flavors)
        threads = [n]
        if use_scalar:
            if cast:
                args.append(_i32(sizes_types))
        elif use_bc:
            args.append(_i64([bc_numel]))
            if alpha is not None:
                args.append(alpha)
            if cast:
                args.append(_i32(sizes_types))
        elif contig:
            if ilp:
                args.append(_i32([n]))
                threads = [-(-n // ILP)]
            if cast:
                args.append(_i32(sizes_types))
        elif inner:
            shape = it.shape()
            args += [_i64(shape[1:]), *(_i64(it.strides(i)[1:]) for i in range(3)), _i32([it.ndim() - 1, shape[0]])]
            threads = [-(-shape[0] // ILP), n // shape[0]]
        else:
            args += [
                _i64(it.shape()),
                *(_i64(it.strides(i)) for i in range(3)),
                _i32([it.ndim(), scalar_type(inp.dtype), scalar_type(oth.dtype), scalar_type(out.dtype)]),
            ]
        return Launch(kname, args, threads, variant)

    # ---------------------------------------------------------- ternary
    def ternary(self, it: Iter, name: str) -> Launch | None:
        n = it.numel()
        if n == 0:
            return None
        ins = [_convert_double(it.input(i)) for i in range(3)]
        out = it.output()
        cast = any(t.dtype != ins[0].dtype for t in ins[1:])
        flavor = "dense" if it.is_contiguous() else "strided"
        o = metal_name(out.dtype)
        kname = f"{name}_{flavor}_cast_{o}" if cast else f"{name}_{flavor}_{o}_{metal_name(ins[0].dtype)}"
        b = self._bound(it)
        args = list(b[:4])
        if flavor == "dense":
            if cast:
                args += [_i32([t.element_size() for t in ins]), _i32([scalar_type(t.dtype) for t in ins])]
        else:
            args += [
                _i64(it.shape()),
                *(_i64(it.strides(i)) for i in range(4)),
                _i32([it.ndim()]),
            ]
            if cast:  # the host binds the types for both; only ternary_strided_cast declares them
                args.append(_i32([*(scalar_type(t.dtype) for t in ins), scalar_type(out.dtype)]))
        return Launch(kname, args, [n], flavor + ("_cast" if cast else ""))

    def plan(self, arity: int, it: Iter, name: str) -> Launch | None:
        return (self.unary, self.binary, self.ternary)[arity - 1](it, name)

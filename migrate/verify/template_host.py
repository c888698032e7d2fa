"""Emulated launches of the conventions before exec_*_kernel's functor registry
(rules/launch_conventions.yaml: unary_1d, unary_inline_template, binary_offsets).

One thread per output element; kernel names from the convention's templates.  Buffers as the
host binds them: a tensor the convention makes contiguous is copied (an output is copied back
after the launch: ``Launch.finish``); a 0-dim CPU tensor is bound by its raw bytes, as
``mtl_setBuffer``'s setBytes does (a double stays 8 bytes of double: the kernel reads what
the Mac's would).  ``offsets``: per thread the byte offsets of (output, input, other) as
uint3 (16 bytes each), as generateKernelDataOffsets computes them from the iterator.
"""

from __future__ import annotations

import torch

from migrate.conventions.launch import Site, conventions
from migrate.verify.dtypes import metal_name
from migrate.verify.host import Launch, bind_tensor, storage_start_read
from migrate.verify.iterator import Iter, Operand, build_iter


class HostError(Exception):
    """The emulated host raises where the real one would (no Metal type for a dtype, ...)."""


def _metal(t: torch.Tensor, what: str) -> str:
    try:
        return metal_name(t.dtype)
    except (KeyError, ValueError):
        raise HostError(f"scalarToMetalTypeString has no Metal type for the {what}'s {t.dtype}") from None


def _raw(t: torch.Tensor, cpu_scalar: bool, at_storage_start: bool) -> torch.Tensor:
    if cpu_scalar:  # setBytes: the same bytes, no conversion
        return storage_start_read(t) if at_storage_start else t.reshape(1).clone()
    return bind_tensor(t)


def kernel_offsets(it: Iter) -> torch.Tensor:
    """(numel, 4) int32: per thread the byte offsets of output, input, other (uint3, padded)."""
    n = it.numel()
    idx = torch.arange(n, dtype=torch.int64)
    out = torch.zeros(n, 4, dtype=torch.int64)
    for d, size in enumerate(it.shape()):
        rem = idx % size
        idx = idx // size
        for k in range(3):
            out[:, k] += rem * it.strides(k)[d]
    return out.to(torch.int32)


class TemplateHost:
    def __init__(self, site: Site):
        self.site = site
        self.conv = conventions()[site.convention]

    def plan(self, arity: int, it: Iter, name: str) -> Launch | None:
        if it.numel() == 0:
            return None
        if self.site.convention.startswith("binary_offsets"):
            return self._binary(it, name)
        if self.site.convention == "ternary_offsets":
            return self._ternary(it, name)
        return self._unary(it, name)

    def _ternary(self, it: Iter, name: str) -> Launch:
        """ternary_mps_impl (migrate/port/ternary_launcher.py): inputs of another dtype than the common one, or CPU
        scalars, cast to it on the device; an output of another dtype computed in a common-dtype temporary
        copied back; then the dense kernel for a contiguous iterator, else the strided one with the
        iterator's shape, its byte strides per dimension (output, input, other1, other2) and ndim."""
        common, out = it.common_dtype(), it.output()
        ins = it.operands[1:]
        notes, finish = [], None
        if out.dtype != common or any(op.tensor.dtype != common or op.cpu_scalar for op in ins):
            moved = [
                f"input {k} ({op.tensor.dtype}{', a CPU scalar' if op.cpu_scalar else ''})"
                for k, op in enumerate(ins)
                if op.tensor.dtype != common or op.cpu_scalar
            ]
            tmp = out if out.dtype == common else torch.empty_like(out, dtype=common)
            if tmp is not out:
                moved.append(f"the output ({out.dtype}) through a {common} temporary copied back")
                finish = lambda: out.copy_(tmp)  # noqa: E731
            notes.append(
                f"{self.site.helper} casts {', '.join(moved)} to {common} on the device, then a fresh iterator"
            )
            cast = [Operand(op.tensor.to(common, copy=op.cpu_scalar)) for op in ins]
            it = build_iter(cast, tmp, common, common)
        t = _metal(it.input(0), "input")
        bound = {
            "input": bind_tensor(it.input(0)),
            "other1": bind_tensor(it.input(1)),
            "other2": bind_tensor(it.input(2)),
            "output": bind_tensor(it.output()),
        }
        if self.site.dense and it.is_contiguous():
            kname = self.conv["dense_kernel"].format(name=name, **{"in": t})
            return Launch(kname, self._buffers("dense_buffers", **bound), [it.numel()], "dense", notes, finish)
        strides = [it.strides(k)[d] for d in range(it.ndim()) for k in range(4)]
        bound.update(
            sizes=torch.tensor(it.shape() or [1], dtype=torch.int64),
            strides=torch.tensor(strides or [0], dtype=torch.int64),
            ndim=torch.tensor([it.ndim()], dtype=torch.int32),
        )
        kname = self.conv["kernel"].format(name=name, **{"in": t})
        return Launch(kname, self._buffers("buffers", **bound), [it.numel()], "strided", notes, finish)

    def kernel_name(self, key: str, name: str, **types) -> str:
        conv = self.conv
        if conv.get("library") == "inline":
            params = [p.format(**types) for p in conv["complex_params" if key == "complex_kernel" else "params"]]
            return f"{conv[key].format(name=name)}<{','.join(params)}>"
        return conv[key].format(name=name, **types)

    def _unary(self, it: Iter, name: str) -> Launch:
        out, inp = it.output(), it.input(0)
        if inp.dtype.is_complex:
            real = "float" if inp.dtype == torch.complex64 else "half"
            kname = self.kernel_name("complex_kernel", name, real=real)
        else:
            kname = self.kernel_name("kernel", name, out=_metal(out, "output"), **{"in": _metal(inp, "input")})
        contiguous = self.conv.get("contiguous", [])
        x = inp.contiguous() if "input" in contiguous else inp
        o = out if out.is_contiguous() or "output" not in contiguous else torch.empty(out.shape, dtype=out.dtype)
        finish = None if o is out else (lambda: out.copy_(o))
        bound = {"output": bind_tensor(o), "input": bind_tensor(x)}
        notes = []
        if "scalar" in self.conv["buffers"]:  # unary_1d_scalar: the value the torch reference gets too
            bound["scalar"] = torch.tensor([self.site.scalar], dtype=self._scalar_dtype(x.dtype))
        elif self.site.extra:  # mtl_setBytes(int64): verify runs the value whose reference is the plain op
            bound["extra"] = torch.zeros(1, dtype=torch.int64)
            notes.append(f"the host's extra argument {self.site.extra} is bound as 0 (the reference op has none)")
        launch = Launch(kname, self._buffers("buffers", **bound), [out.numel()], "1d", notes, finish)
        if out.dtype != inp.dtype and not inp.dtype.is_complex:
            why = (
                "the kernel is instantiated for these types and computes at the output's precision "
                "(TensorIterator casts through the common dtype only on CPU)"
                if self.conv.get("library") == "inline"
                else "getPipelineStateForFunc raises when that kernel does not exist"
            )
            launch.notes.append(f"{self.site.helper} never casts: it asks the library for {kname} ({why})")
        return launch

    def _scalar_dtype(self, input_dtype):
        """The run-time scalar's dtype as the launcher binds it: ``input`` (the input's, rules/launch_conventions.yaml)
        or a fixed one (``float32``)."""
        kind = self.conv["scalar_type"]
        return input_dtype if kind == "input" else getattr(torch, kind)

    def _buffers(self, key: str, **bound) -> list:
        """The convention's buffer list, in order; names it binds only optionally (extra) are left out."""
        return [bound[b] for b in self.conv[key] if b in bound]

    def _promote(self, it: Iter) -> tuple[Iter, list[str]]:
        """The site's promoting wrapper: inputs cast to the common dtype on the device (a CPU scalar is
        copied there), then a fresh iterator over them and the same output."""
        common = it.common_dtype()
        ins = it.operands[1:]
        if all(op.tensor.dtype == common and not op.cpu_scalar for op in ins):
            return it, []
        cast = [Operand(op.tensor.to(common, copy=op.cpu_scalar)) for op in ins]
        moved = [
            f"input {k} ({op.tensor.dtype}{', a CPU scalar' if op.cpu_scalar else ''})"
            for k, op in enumerate(ins)
            if op.tensor.dtype != common or op.cpu_scalar
        ]
        note = f"{self.site.promotes} casts {', '.join(moved)} to {common} on the device, then a fresh iterator"
        return build_iter(cast, it.output(), it.output().dtype, common), [note]

    def _binary(self, it: Iter, name: str) -> Launch:
        promoted: list[str] = []
        if self.site.promotes:
            it, promoted = self._promote(it)
        launch = self._binary_launch(it, name)
        launch.notes[:0] = promoted
        return launch

    def _binary_launch(self, it: Iter, name: str) -> Launch:
        ops = it.operands
        inp, out = it.input(0), it.output()
        t = _metal(inp, "input")
        other, by_value = it.input(1), ops[2].cpu_scalar
        if other.element_size() < inp.element_size():
            raise HostError(
                f"{name}_{t} reads other ({other.dtype}, {other.element_size()} bytes an element) as "
                f"{inp.dtype} ({inp.element_size()} bytes): out-of-bounds reads, not run; "
                + self._no_promotion(by_value)
            )
        if inp.dtype == torch.bool and other.dtype != torch.bool:
            raise HostError(
                f"{name}_{t} reads other ({other.dtype}) as bool: bytes other than 0 and 1 are not "
                "valid bools (undefined behaviour), not run"
            )
        at_start = self.site.scalar_at_storage_start
        notes = []
        if other.dtype != inp.dtype:
            notes.append(f"{name}_{t} reads other ({other.dtype}) as {inp.dtype}: " + self._no_promotion(by_value))
        for k, op in ((1, ops[1]), (2, ops[2])):
            if op.cpu_scalar and at_start and op.tensor.storage_offset():
                notes.append(
                    f"mtl_setBuffer binds a CPU scalar by storage().data(): input {k - 1}'s storage "
                    f"offset {op.tensor.storage_offset()} is ignored"
                )
        bound = {
            "input": _raw(ops[1].tensor, ops[1].cpu_scalar, at_start),
            "other": _raw(ops[2].tensor, ops[2].cpu_scalar, at_start),
            "output": bind_tensor(out),
        }
        if "scalar" in self.conv["buffers"]:  # binary_offsets_scalar: the value the torch reference gets too
            bound["scalar"] = torch.tensor([self.site.scalar], dtype=self._scalar_dtype(ops[1].tensor.dtype))
        if self.site.dense and it.is_contiguous():
            return Launch(
                self.conv["dense_kernel"].format(name=name, **{"in": t}),
                self._buffers("dense_buffers", **bound),
                [it.numel()],
                "dense",
                notes,
            )
        kname = self.conv["kernel"].format(name=name, **{"in": t})
        return Launch(
            kname, self._buffers("buffers", offsets=kernel_offsets(it), **bound), [it.numel()], "offsets", notes
        )

    @staticmethod
    def _no_promotion(cpu_scalar: bool) -> str:
        how = "a CPU scalar's raw bytes (mtl_setBuffer setBytes, no conversion)" if cpu_scalar else "its buffer as is"
        return (
            f"TensorIterator promotes inputs to the common dtype only when the common device is CPU "
            f"(compute_types), so binary_mps_impl binds {how}"
        )


class TemplateLibrary:
    """An inline ``MetalShaderLibrary(SOURCE, n)``: one library per parameter list, compiled on first use.

    Kernels are named ``function<param,...>`` (TemplateHost.kernel_name writes them so).
    """

    def __init__(self, compile_text, template: str):
        import re

        from migrate.verify.conventions import fmt_format
        from migrate.verify.dtypes import table

        self._compile, self._format, self.template = compile_text, fmt_format, template
        self._libs: dict[tuple[str, ...], object] = {}
        fns = re.findall(r"\bkernel\s+void\s+(\w+)", template)
        metal = [v["metal"] for v in table()["dtypes"].values()]
        self.kernel_names = tuple(f"{f}<{a},{b}>" for f in fns for a in metal for b in metal)

    def library(self, params: tuple[str, ...]):
        if params not in self._libs:
            self._libs[params] = self._compile(self._format(self.template, list(params)))
        return self._libs[params]

    def empty_strided(self, size, stride, dtype=None):  # buffers the kernels take without copies
        return next(iter(self._libs.values())).empty_strided(size, stride, dtype)

    def arena_tensor(self, t, memo: dict | None = None):
        return next(iter(self._libs.values())).arena_tensor(t, memo)

    def kernel(self, name: str):
        fn, _, rest = name.partition("<")
        return self.library(tuple(rest.rstrip(">").split(","))).kernel(fn)

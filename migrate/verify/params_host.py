"""Kernels launched with a struct of run-time scalars (rules/launch_conventions.yaml ``params_1d``).

``params_site`` finds the launch in the tree: a host stub calling the tree's own ``exec_params_kernel(iter,
"name", ninputs, std::array<scalar_t, N>{a.to<scalar_t>(), ...})`` whose definition the same host file holds.  The
field order is read from that call.  ``ParamsHost`` binds as the helper does: operands broadcast to the
output and made contiguous in the common dtype, the output computed in the common dtype (copied into the
user's afterwards), the struct as the fields' values converted to the common dtype (``Scalar::to``).
The values verify passes -- to the kernel and to every reference -- come from rules/scalar_args.yaml.
"""

from __future__ import annotations

import re

import torch

from migrate.tables import load_table
from migrate.conventions.launch import Site, conventions
from migrate.verify.dtypes import metal_name
from migrate.verify.host import Launch, bind_tensor
from migrate.verify.iterator import Iter

CONVENTION = "params_1d"
FUNCTOR_PARAMS = "functor_params"


def scalar_args(family: str) -> dict | None:
    """{Scalar argument: value} in the schema's order, or None (rules/scalar_args.yaml)."""
    return load_table("scalar_args.yaml")["families"].get(family)


_FIELDS = re.compile(rb"(\w+)\s*\.\s*to\s*<\s*scalar_t\s*>\s*\(\s*\)")
_WITH_PARAMS = re.compile(
    rb'\b(exec_(unary|binary)_kernel_with_params)\s*\(\s*\w+\s*,\s*"(\w+)"\s*,(.*?)'
    rb'fmt::format\s*\(\s*"(\w*)\{\}"',
    re.S,
)


def params_site(ix, fns) -> Site | None:
    """A ``params_1d`` launch (the port-written helper), else a ``functor_params`` one (registered functors)."""
    return _helper_site(ix, fns) or _functor_params_site(ix, fns)


def _fields(ix, fn, data: bytes, call: bytes) -> dict:
    """Site fields of the struct ``std::array<scalar_t, N>{...}`` in ``call``: ``params`` (a field per element),
    and where an element is a local the stub computes from its arguments (``const scalar_t nan_replacement
    = static_cast<scalar_t>(nan.value_or(0.));``), its ``exprs`` and the stub's ``args``."""
    from migrate.conventions.host_expr import host_scalars
    from migrate.source.params import definition_params, split_params

    m = re.search(rb"std\s*::\s*array\s*<[^>]*>\s*\{", call)
    plain = tuple(f.decode() for f in _FIELDS.findall(call))
    if m is None:
        return {"params": plain}
    from migrate.source.literal_search import closing_brace
    from migrate.source import SourceFile

    close = closing_brace(SourceFile(call).code, m.end() - 1)
    elems = split_params(call[m.end() : close if close is not None else len(call)])
    if len(plain) == len(elems):
        return {"params": plain}
    text = data[fn.span.start : fn.span.end].decode("utf-8", "replace")
    names = [p.name for p in definition_params(text, 1)][1:]
    local = host_scalars(text, 1, names)
    fields, exprs = [], []
    for e in elems:
        f = _FIELDS.fullmatch(e.encode())
        fields.append(f.group(1).decode() if f else e)
        exprs.append(None if f else local[e].expr if e in local else e)
    return {"params": tuple(fields), "exprs": tuple(exprs), "args": tuple(names)}


def _functor_params_site(ix, fns) -> Site | None:
    """``lib.exec_binary_kernel_with_params(iter, "name", std::array<scalar_t, N>{a.to<scalar_t>(), ...},
    fmt::format("NAMEParams_{}", ...))``: fields and the type-name prefix read from the call."""
    calls = conventions()[FUNCTOR_PARAMS]["calls"]
    for fn in fns:
        data = ix.tree.sources.get(fn.path) or (ix.tree.root / fn.path).read_bytes()
        m = _WITH_PARAMS.search(data[fn.span.start : fn.span.end])
        if m is None or m.group(1).decode() not in calls:
            continue
        line = data.count(b"\n", 0, fn.span.start + m.start()) + 1
        return Site(
            FUNCTOR_PARAMS,
            m.group(3).decode(),
            m.group(1).decode(),
            1 if m.group(2) == b"unary" else 2,
            fn.path,
            line,
            fn.name,
            params_type=m.group(5).decode(),
            **_fields(ix, fn, data, m.group(4)),
        )
    return None


def _helper_site(ix, fns) -> Site | None:
    helper = conventions()[CONVENTION]["calls"][0]
    call = re.compile(rb"\b" + re.escape(helper.encode()) + rb'\s*\(\s*\w+\s*,\s*"(\w+)"\s*,\s*(\d+)\s*,([^;]*)\)\s*;')
    define = re.compile(rb"\bvoid\s+" + re.escape(helper.encode()) + rb"\s*\(")
    for fn in fns:
        data = ix.tree.sources.get(fn.path) or (ix.tree.root / fn.path).read_bytes()
        m = call.search(data[fn.span.start : fn.span.end])
        if m is None or define.search(data) is None:
            continue
        line = data.count(b"\n", 0, fn.span.start + m.start()) + 1
        fields = _fields(ix, fn, data, m.group(3))
        return Site(CONVENTION, m.group(1).decode(), helper, int(m.group(2)), fn.path, line, fn.name, **fields)
    return None


class ParamsHost:
    def __init__(self, site: Site, values: list):
        self.site, self.values = site, values
        self.conv = conventions()[CONVENTION]

    def plan(self, arity: int, it: Iter, name: str) -> Launch | None:
        out = it.output()
        if out.numel() == 0:
            return None
        common = it.common_dtype()
        inputs = [torch.broadcast_to(it.input(k).to(common), out.shape).contiguous() for k in range(arity)]
        result = out if out.is_contiguous() and out.dtype == common else torch.empty(out.shape, dtype=common)
        finish = None if result is out else (lambda: out.copy_(result))
        kname = self.conv["kernel"].format(name=name, out=metal_name(result.dtype), **{"in": metal_name(common)})
        values = self.site.field_values(common)
        params = torch.tensor(values, dtype=torch.float64).to(common)  # Scalar::to<scalar_t>()
        args = [bind_tensor(result), *(bind_tensor(x) for x in inputs), params]
        fields = ", ".join(f"{f}={v}" for f, v in zip(self.site.params, values))
        return Launch(kname, args, [out.numel()], "1d", [f"{self.site.helper} params {{{fields}}}"], finish)


class FunctorParamsHost:
    """``exec_{unary,binary}_kernel_with_params`` as today's OperationUtils.mm does it: dense for a contiguous
    iterator, else strided; the binary cast kernel's name leaves out the input type, as the host builds it."""

    def __init__(self, site: Site, values: list, names=frozenset()):
        self.site, self.values, self.names = site, values, frozenset(names)
        self.conv = conventions()[FUNCTOR_PARAMS]

    def plan(self, arity: int, it: Iter, name: str) -> Launch | None:
        from migrate.verify.host import _convert_double, _i32, _i64
        from migrate.verify.dtypes import scalar_type

        out = it.output()
        if out.numel() == 0:
            return None
        common = it.common_dtype()
        ptype = f"{self.site.params_type}{metal_name(common)}"
        values = self.site.field_values(common)
        params = torch.tensor(values, dtype=torch.float64).to(common)
        flavor = self.conv["flavors"]["contiguous" if it.is_contiguous() else "other"]
        b = [bind_tensor(op.tensor, op.cpu_scalar) for op in it.operands]
        note = [f"{self.site.helper} params {{{', '.join(f'{f}={v}' for f, v in zip(self.site.params, values))}}}"]
        if arity == 1:  # REGISTER_UNARY_ALPHA_OP's kernels: the struct after the tensors, or after ndim
            kname = self.conv["kernel"].format(
                name=name,
                flavor=flavor,
                out=metal_name(out.dtype),
                params=ptype,
                **{"in": metal_name(it.input(0).dtype)},
            )
            if flavor == "dense":
                return Launch(kname, [b[0], b[1], params], [out.numel()], flavor, note)
            shape, n = it.shape(), out.numel()
            args = [b[0], b[1], _i64(shape), _i64(it.strides(1)), _i64(it.strides(0)), _i32([it.ndim()]), params]
            return Launch(kname, args, [shape[0], n // shape[0]], flavor, note)
        inp, oth = _convert_double(it.input(0)), _convert_double(it.input(1))
        cast = inp.dtype != oth.dtype
        o = metal_name(out.dtype)
        kname = (
            f"{name}_{flavor}_cast_{o}_{ptype}"
            if cast
            else self.conv["kernel"].format(
                name=name, flavor=flavor, out=o, params=ptype, **{"in": metal_name(inp.dtype)}
            )
        )
        if cast and kname not in self.names:
            # the era whose REGISTER_BINARY_ALPHA_OP names cast kernels <out>_<in>_<alpha> has a host asking so
            with_in = f"{name}_{flavor}_cast_{o}_{metal_name(common)}_{ptype}"
            kname = with_in if with_in in self.names else kname
        types = [scalar_type(inp.dtype), scalar_type(oth.dtype)]
        if flavor == "dense":
            args = [b[0], b[1], b[2], params] + (
                [_i32([inp.element_size(), oth.element_size(), *types])] if cast else []
            )
        else:
            args = [
                b[0],
                b[1],
                b[2],
                params,
                _i64(it.shape()),
                *(_i64(it.strides(i)) for i in range(3)),
                _i32([it.ndim(), *types, scalar_type(out.dtype)]),
            ]
        return Launch(kname, args, [out.numel()], flavor + ("_cast" if cast else ""), note)


class WithScalars:
    """A reference called with the family's scalar arguments after its tensors."""

    def __init__(self, ref, values: list, site: Site):
        self.ref, self.values, self.site = ref, values, site
        self.name = ref.name
        self.where = getattr(ref, "where", "")

    def compute(self, case):
        from migrate.verify.references import NotApplicable, PortReference, ReferenceUnavailable

        if isinstance(self.ref, PortReference):
            inputs = self.ref._inputs(case)
            out_dtype = case.out.dtype if case.out is not None else case.expected_dtype
            try:
                dtype = next(iter(inputs.values())).dtype  # the struct's scalar_t
                values = self.site.field_values(dtype)
                names = {p.name: v for p, v in zip(getattr(self.ref.dag, "params", ()), values)}
                return self.ref.evaluate(self.ref.dag, {**inputs, **names}, out_dtype)
            except Exception as exc:  # noqa: BLE001 - a foreign evaluator: no reference here
                raise ReferenceUnavailable(f"{type(exc).__name__}: {exc}") from None
        args = [a.clone() if isinstance(a, torch.Tensor) else a for a in case.reference_args()]
        try:
            if case.out is not None:
                out = torch.empty_like(case.out)
                self.ref.fn(*args, *self.values, out=out)
                return out
            return self.ref.fn(*args, *self.values)
        except TypeError as exc:
            raise NotApplicable(str(exc).splitlines()[0]) from None
        except RuntimeError as exc:  # torch.ops: no overload takes these arguments (a Python number, ...)
            kind = NotApplicable if "failed to match any schema" in str(exc) else ReferenceUnavailable
            raise kind(str(exc).splitlines()[0]) from None
        except NotImplementedError as exc:
            raise ReferenceUnavailable(str(exc).splitlines()[0]) from None


def prepare(source, references: list, opts, family: str) -> list[str]:
    """For a params_1d launch: the scalar values bound into the host and every reference; notes."""
    if source.convention not in (CONVENTION, FUNCTOR_PARAMS):
        return []
    table = scalar_args(family)
    if table is None:
        from migrate.errors import UsageError

        raise UsageError(
            f"{family}: its kernel takes run-time scalars ({', '.join(source.site.params)}) and "
            f"rules/scalar_args.yaml gives no values for them"
        )
    values = list(table.values())
    source.site.scalar_values = values
    from migrate.verify.references import TorchCpuReference

    for r in references:  # torch CPU takes them as its own call's arguments (and keeps its other answers)
        if type(r) is TorchCpuReference:
            r.scalar_values = values
    references[:] = [r if type(r) is TorchCpuReference else WithScalars(r, values, source.site) for r in references]
    shown = ", ".join(f"{k}={v}" for k, v in table.items())
    return [
        f"run-time scalars {shown} (rules/scalar_args.yaml) passed to the kernel and every reference; "
        f"an OpInfo sample's case binds the sample's own (as the operator receives them)"
    ]


def host_for(site: Site, names=frozenset()):
    """The emulated host of a launch with a parameter struct (``names``: the library's kernels)."""
    if site.convention == CONVENTION:
        return ParamsHost(site, site.scalar_values)
    return FunctorParamsHost(site, site.scalar_values, names)

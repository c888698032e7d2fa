"""Ports of graphs with several run-time scalars: a parameter struct, in the tree's era.

The struct ``template <typename T> struct NAMEParams { T a; T b; };`` holds one field per host Scalar (the
MPS function's signature order, the stub's order); the functor takes it as its last argument.

- modern (``functor_registry``): upstream's shape, the struct registered through ``REGISTER_*_ALPHA_OP``
  with a ``NAMEParams_<T>`` typedef, launched by ``lib.exec_*_kernel_with_params(iter, name, params,
  type name)`` (rules/launch_conventions.yaml ``functor_params``); the tree's MetalShaderLibrary must
  declare that launcher.
- 2.7 era (``unary_1d`` / ``binary_offsets`` files): the tree has no launch with arguments, so the port
  writes one once per host file, ``exec_params_kernel(iter, name, ninputs, params)`` (``params_1d``): contiguous
  operands in the common dtype, one thread per element, the struct by ``mtl_setBytes``; the kernel is a
  template plus the file's kind of ``[[host_name]]`` instantiation macro.
"""

from __future__ import annotations

import re

from migrate.fixes import FixBuilder
from migrate.model import Edit
from migrate.port.dag import Dag
from migrate.port.emit import Plan, functor, struct_name
from migrate.conventions.launch import conventions
from migrate.port.host_edits import dispatch_line, stub_function_params
from migrate.port.text_edits import struct_end
from migrate.port.host_name_kernels import _guarded
from migrate.port.fmt import format_text
from migrate.conventions.target import KIND, Target
from migrate.port.translate import PortBlocked

_line_end = FixBuilder.line_end
ARGS = {1: ("input",), 2: ("input", "other"), 3: ("input", "other1", "other2")}


def convention(key: str) -> dict:
    return conventions()[key]


# ------------------------------------------------------------------- the stub
def stub_signature(ix, stub: str) -> tuple[str, list[str]] | None:
    """(iterator parameter type, the other parameter types) of ``stub``'s function type, or None."""
    parts = stub_function_params(ix, stub)
    return (parts[0], parts[1:]) if parts else None


def check_stub(ix, stub: str, dag: Dag) -> str:
    """The stub's iterator type (``TensorIteratorBase&`` or ``TensorIterator&``); PortBlocked unless the
    stub takes exactly one Scalar per field of the struct."""
    sig = stub_signature(ix, stub)
    names = ", ".join(p.name for p in dag.params)
    if sig is None:
        raise PortBlocked(
            f"{stub} is not declared with a function type the port reads; the graph reads {names}",
            "stub signature",
            dag.source,
        )
    it, extra = sig
    if dag.args:  # fields computed from the arguments: the stub takes those arguments
        if "TensorIterator" not in it or [_bare(t) for t in extra] != [_bare(t) for t, _ in dag.args]:
            raise PortBlocked(
                f"{stub} takes ({', '.join([it, *extra])}), not the arguments "
                f"({', '.join(t for t, _ in dag.args)}) the graph's run-time scalars are computed from",
                "stub signature",
                dag.source,
            )
        return it
    scalars = [t for t in extra if "Scalar" in t.replace("&", " ").replace("::", " ").split()]
    if "TensorIterator" not in it or len(scalars) != len(extra) or len(extra) != len(dag.params):
        raise PortBlocked(
            f"{stub} takes ({', '.join([it, *extra])}), not one Scalar for each of the graph's "
            f"run-time scalars {names}",
            "stub signature",
            dag.source,
        )
    return it


def _bare(t: str) -> str:
    """A parameter type without qualifiers and namespaces: ``const std::optional<double>&`` -> ``optional<double>``."""
    t = t.replace("&", " ").replace("std::", "").replace("c10::", "").replace("at::", "")
    return "".join(w for w in t.split() if w != "const")


# ---------------------------------------------------------------- kernel text
def struct_text(name: str, dag: Dag, opmath: bool = False) -> str:
    """``opmath``: the fields in ``c10::metal::opmath_t<T>`` (float for half and bfloat), as torch CPU binds a
    scalar for reduced floating types."""
    kind = "c10::metal::opmath_t<T>" if opmath else "T"
    fields = "".join(f"  {kind} {p.name};\n" for p in dag.params)
    return f"template <typename T>\nstruct {struct_name(name)} {{\n{fields}}};\n"


def _registration_lines(name: str, arity: int, plan: Plan) -> list[str]:
    """Upstream's shape: a typedef per dtype names the struct in the kernel's host name."""
    s = struct_name(name)
    macro = f"REGISTER_{KIND[arity].upper()}_ALPHA_OP"
    out = []
    for i, o in plan.pairs():
        out.append(f"typedef {s}<{i}> {s}_{i};")
        out.append(f"{macro}({name}, {i}, {s}_{i}, {o});")
    return out


def _host_name_kernel(name: str, arity: int, plan: Plan, target: Target) -> str:
    """The template kernel and its ``[[host_name]]`` instantiations (rules/launch_conventions.yaml params_1d)."""
    s, args = struct_name(name), ARGS[arity]
    host = convention("params_1d")["kernel"].format(name=name, out='" #DTYPE0 "', **{"in": '" #DTYPE1 "'})
    quoted = ('"' + host + '"').replace(' ""', "")
    params = ["device T0* output [[buffer(0)]]"]
    params += [f"constant T1* {a} [[buffer({k + 1})]]" for k, a in enumerate(args)]
    params += [f"constant {s}<T1>& params [[buffer({arity + 1})]]", "uint index [[thread_position_in_grid]]"]
    call = ", ".join([f"{a}[index]" for a in args] + ["params"])
    kernel = ["template <typename T0, typename T1>", f"kernel void {name}_kernel("]
    kernel += [f"    {p}," for p in params[:-1]] + [f"    {params[-1]}) {{"]
    kernel += [f"  output[index] = static_cast<T0>({name}_functor()({call}));", "}"]
    macro = f"INSTANTIATE_{name.upper()}_KERNEL"
    inst = [f"#define {macro}(DTYPE0, DTYPE1)", f"  template [[host_name({quoted})]] kernel void", f"  {name}_kernel("]
    inst += [f"      {p.replace('T0', 'DTYPE0').replace('T1', 'DTYPE1')}," for p in params[:-1]]
    inst += [f"      {params[-1]})"]
    width = max(len(x) for x in inst[:-1]) + 1
    inst = [x.ljust(width) + "\\" for x in inst[:-1]] + inst[-1:]
    regs = _guarded([f"{macro}({o}, {i});" for i, o in plan.pairs()], target)
    return "\n".join(kernel) + "\n\n" + "\n".join(inst) + "\n\n" + "\n".join(regs) + "\n"


# ------------------------------------------------------------------ host text
def _dispatch_macro(plan: Plan) -> str:
    ints = plan.int_dtypes
    if not ints:
        return "AT_DISPATCH_FLOATING_TYPES_AND2(kHalf, kBFloat16"
    return (
        "AT_DISPATCH_ALL_TYPES_AND3(kBool, kHalf, kBFloat16"
        if "bool" in ints
        else "AT_DISPATCH_ALL_TYPES_AND2(kHalf, kBFloat16"
    )


def _stub_text(name: str, it: str, dag: Dag, plan: Plan, call: str, types: list[str] = (), opmath: bool = False) -> str:
    """``static void NAME_mps_kernel(ITER iter, const Scalar& a, ...)``: the fields in the common dtype, as
    a ``std::array`` (the layout of the kernel's struct: one type, no padding), passed to ``call``."""
    fields = [p.name for p in dag.params]
    if dag.args:  # the fields are the MPS function's own expressions of its arguments, as locals
        sig = ", ".join([f"{it} iter"] + [f"{t} {n}" for t, (_, n) in zip(types, dag.args)])  # the stub's types
        locals_ = "".join(f"    const scalar_t {p.name} = {p.expr};\n" for p in dag.params if p.expr)
        values = ", ".join(p.name if p.expr else f"{p.name}.to<scalar_t>()" for p in dag.params)
    else:
        sig = ", ".join([f"{it} iter"] + [f"const Scalar& {f}" for f in fields])
        locals_ = ""
        values = ", ".join(f"{f}.to<{'opmath_t' if opmath else 'scalar_t'}>()" for f in fields)
    params = f"std::array<{'opmath_t' if opmath else 'scalar_t'}, {len(fields)}>{{{values}}}"
    if opmath:
        locals_ += "    using opmath_t = at::opmath_type<scalar_t>;\n"
    return (
        f"\nstatic void {name}_mps_kernel({sig}) {{\n"
        f'  {_dispatch_macro(plan)}, iter.common_dtype(), "{name}_mps", [&]() {{\n'
        f"{locals_}"
        f"    {call.replace('PARAMS', params)}\n"
        f"  }});\n}}\n"
    )


PARAMS_LAUNCHER = """
// Launches NAME_<out>_<in> with a struct of run-time scalars (written by mps-migrate port): the first
// ninputs operands (a stub's iterator may carry more than its kernel reads) broadcast to the output and made
// contiguous in the common dtype, one thread per element.
template <typename Params>
static void exec_params_kernel(TensorIteratorBase& iter,
                               const std::string& name,
                               unsigned ninputs,
                               const Params& params) {
  using namespace mps;
  const Tensor& output = iter.output();
  if (output.numel() == 0) {
    return;
  }
  const auto common = iter.common_dtype();
  std::vector<Tensor> inputs;
  for (unsigned i = 0; i < ninputs; ++i) {
    inputs.push_back(iter.input(i).to(output.device(), common).expand(output.sizes()).contiguous());
  }
  Tensor result = output.is_contiguous() && output.scalar_type() == common
      ? output
      : at::empty(output.sizes(), output.options().dtype(common));
  auto cplState = lib.getPipelineStateForFunc(
      fmt::format("{}_{}_{}", name, scalarToMetalTypeString(result), scalarToMetalTypeString(common)));
  MPSStream* mpsStream = getCurrentMPSStream();
  dispatch_sync_with_rethrow(mpsStream->queue(), ^() {
    @autoreleasepool {
      auto computeEncoder = mpsStream->commandEncoder();
      [computeEncoder setComputePipelineState:cplState];
      mtl_setBuffer(computeEncoder, result, 0);
      for (unsigned i = 0; i < inputs.size(); ++i) {
        mtl_setBuffer(computeEncoder, inputs[i], i + 1);
      }
      mtl_setBytes(computeEncoder, params, inputs.size() + 1);
      mtl_dispatch1DJob(computeEncoder, cplState, output.numel());
    }
  });
  if (!result.is_same(output)) {
    const_cast<Tensor&>(output).copy_(result);
  }
}
"""


def _helper_defined(data: bytes, helper: str) -> bool:
    return re.search(rb"\bvoid\s+" + re.escape(helper.encode()) + rb"\s*\(", data) is not None


def _host_edits(ix, target: Target, name: str, stub: str, body: str, helper: str | None) -> list[Edit]:
    """The stub (and ``helper``'s definition when the file has none) after the file's last registered stub
    function, its REGISTER_DISPATCH after the file's last."""
    data = ix.tree.sources[target.hpath]
    hf = target.hf
    registered = {r.function for r in hf.registrations}
    fns = [f for f in hf.functions if f.name in registered and f.kind != "macro"]
    regs = [r for r in hf.registrations if r.macro == "REGISTER_DISPATCH" and not r.via_macro]
    if fns:
        fpos = _line_end(data, max(f.span.end for f in fns) - 1)
    else:
        fpos = _line_end(data, max(r.span.end for r in hf.registrations) - 1) if hf.registrations else len(data)
    text = (PARAMS_LAUNCHER if helper and not _helper_defined(data, helper) else "") + format_text(
        ix.tree.root, hf.path, body
    )
    reg = dispatch_line(data, regs, stub, f"{name}_mps_kernel")
    rpos = _line_end(data, max(r.span.end for r in regs) - 1) if regs else fpos
    if rpos > fpos:
        return [Edit(target.hpath, fpos, fpos, text), Edit(target.hpath, rpos, rpos, reg)]
    return [Edit(target.hpath, fpos, fpos, text + reg)]


def edits(ix, target: Target, name: str, dag: Dag, plan: Plan, stub: str, it: str, opmath: bool = False) -> list[Edit]:
    """Kernel-file and host-file edits of a parameter-struct port in the target's era (``opmath``: struct_text's)."""
    arity = len(dag.inputs)
    kdata = ix.tree.sources[target.kpath]
    types = stub_signature(ix, stub)[1] if dag.args else []
    body = struct_text(name, dag, opmath) + "\n" + functor(name, dag, plan, dag.source, target.traits)
    if target.convention == "functor_registry":
        launcher = convention("functor_params")["calls"][arity - 1]
        if not _declares(ix, launcher):
            raise PortBlocked(
                f"the tree's MetalShaderLibrary declares no {launcher}(iter, name, params, type): "
                f"no launch passes a parameter struct",
                "run-time scalars (no params launch)",
                dag.source,
            )
        fns = [f for f in target.mf.functors if f.path == target.kpath]
        fpos = struct_end(kdata, max(f.span.start for f in fns)) if fns else len(kdata)
        regs = [r for r in target.mf.registrations if r.path == target.kpath]
        rpos = _line_end(kdata, max(r.span.end for r in regs) - 1) if regs else len(kdata)
        out = [
            Edit(target.kpath, fpos, fpos, "\n" + body),
            Edit(target.kpath, rpos, rpos, "".join(x + "\n" for x in _registration_lines(name, arity, plan))),
        ]
        call = (
            f'lib.{launcher}(iter, "{name}", PARAMS, fmt::format("{struct_name(name)}_{{}}", '
            f"mps::scalarToMetalTypeString(iter.common_dtype())));"
        )
        return out + _host_edits(ix, target, name, stub, _stub_text(name, it, dag, plan, call, types), None)
    text = "\n" + body + "\n" + _host_name_kernel(name, arity, plan, target)
    out = [Edit(target.kpath, len(kdata), len(kdata), text if kdata.endswith(b"\n") else "\n" + text)]
    helper = convention("params_1d")["calls"][0]
    call = f'{helper}(iter, "{name}", {arity}, PARAMS);'
    stub_text = _stub_text(name, it, dag, plan, call, types, opmath)
    return out + _host_edits(ix, target, name, stub, stub_text, helper)


def _declares(ix, launcher: str) -> bool:
    """Does a header of the tree's mps folder declare ``launcher``?"""
    rx = re.compile(rb"\b" + re.escape(launcher.encode()) + rb"\s*\(")
    return any(rx.search(d) for p, d in ix.tree.sources.items() if p.endswith(".h") and "/mps/" in p)

"""Edits of a port into target files whose kernels the host finds by their ``[[host_name]]``
(migrate.conventions.target's ``unary_1d`` and ``binary_offsets``).

Unary: the functor, a template kernel ``NAME_kernel<T0, T1>`` calling it, an ``INSTANTIATE_NAME_KERNEL``
macro of the file's ``[[host_name("NAME_" #DTYPE0 "_" #DTYPE1)]]`` kind with one invocation per (out, in)
pair; host ``lib.exec_unary_kernel(iter, "NAME")``.  Binary: the functor, registered through the file's
own macro per input dtype; host ``mps::binary_mps_impl(iter, "NAME")``.  bfloat goes under the file's
``#if __METAL_VERSION__`` guard, as the file does.
"""

from __future__ import annotations

import re

from migrate.fixes import FixBuilder
from migrate.model import Edit
from migrate.port.emit import Plan, functor
from migrate.port.host_edits import dispatch_line
from migrate.conventions.launch import promotes
from migrate.port.stub_types import iterator_param
from migrate.conventions.target import Target
from migrate.source import SourceFile
from migrate.source.macros import find_invocations
from migrate.tables import dtype_family

_line_end = FixBuilder.line_end


def _guarded(lines: list[str], target: Target) -> list[str]:
    """bfloat lines first under the file's bfloat guard (the file's order), then the others."""
    bf = [x for x in lines if "bfloat" in x]
    rest = [x for x in lines if "bfloat" not in x]
    if not bf or target.bfloat_guard is None:
        return bf + rest
    return [target.bfloat_guard, *bf, "#endif", *rest]


def _after_last_definition(data: bytes, target: Target) -> int:
    """Insert new code after the file's last top-level definition before its first instantiation macro use."""
    code = SourceFile(data).code
    first_define = code.find(b"#define")
    head = code[:first_define] if first_define > 0 else code
    end = head.rfind(b"\n}")
    return _line_end(data, end + 1) if end >= 0 else len(data)


def out_cast_pairs(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (in, out) pairs to instantiate: exec_unary_kernel asks for ``{name}_{out}_{in}`` with out=
    the output tensor's dtype and never casts, while the old MPSGraph path cast its result to any out=.
    So a floating or bool result also gets every floating out dtype (float32 -> float16 out=, ...), and
    a bool result its input's dtype, in input order."""
    floats = [t for t in dtype_family("float") if any(o == t for _, o in pairs)] or list(dtype_family("float"))
    out: list[tuple[str, str]] = []
    for i in dict.fromkeys(i for i, _ in pairs):
        natural = [o for j, o in pairs if j == i]
        extra = [i] if natural == ["bool"] and i != "bool" else []
        if any(o == "bool" or o in floats for o in natural):
            extra += floats
        out += [(i, o) for o in dict.fromkeys(natural + extra)]
    return out


def host_name_literal(target: Target, name: str) -> str:
    """The kernel's ``[[host_name(...)]]`` string in an instantiation macro over (DTYPE0, DTYPE1): the
    tree's host-name pattern with the dtypes stringised (``"exp_" #DTYPE0 "_" #DTYPE1``)."""
    host = target.host_name(name, "{out}", "{in}")
    quoted = '"' + host.replace("{out}", '" #DTYPE0 "').replace("{in}", '" #DTYPE1 "') + '"'
    return quoted.replace(' ""', "").replace('"" ', "")


def unary_edits(
    target: Target, data: bytes, name: str, body: str, plan: Plan, scalar: str = "", pairs: list | None = None
) -> list[Edit]:
    """The kernel text appended at the end of the file (after the file's last instantiations).
    ``scalar``: a run-time scalar the kernel takes as ``constant T1& SCALAR [[buffer(2)]]``
    (migrate/port/scalar_launcher.py); ``pairs``: the (in, out) dtypes to instantiate (default: the plan's
    with every floating ``out=`` dtype)."""
    param = [f"    constant T1& {scalar} [[buffer(2)]],"] if scalar else []
    arg = f", {scalar}" if scalar else ""
    macro = f"INSTANTIATE_{name.upper()}_KERNEL"
    quoted = host_name_literal(target, name)
    kernel = [
        "template <typename T0, typename T1>",
        f"kernel void {name}_kernel(",
        "    device T0* output [[buffer(0)]],",
        "    constant T1* input [[buffer(1)]],",
        *param,
        "    uint index [[thread_position_in_grid]]) {",
        f"  output[index] = static_cast<T0>({name}_functor()(input[index]{arg}));",
        "}",
    ]
    inst = [
        f"#define {macro}(DTYPE0, DTYPE1)",
        f"  template [[host_name({quoted})]] kernel void",
        f"  {name}_kernel(",
        "      device DTYPE0* output [[buffer(0)]],",
        "      constant DTYPE1* input [[buffer(1)]],",
        *["  " + p.replace("T1&", "DTYPE1&") for p in param],
        "      uint id [[thread_position_in_grid]])",
    ]
    width = max(len(x) for x in inst[:-1]) + 1
    inst = [x.ljust(width) + "\\" for x in inst[:-1]] + inst[-1:]
    pairs = out_cast_pairs(plan.pairs()) if pairs is None else pairs
    regs = _guarded([f"{macro}({o}, {i});" for i, o in pairs], target)
    text = "\n" + body + "\n" + "\n".join(kernel) + "\n\n" + "\n".join(inst) + "\n\n" + "\n".join(regs) + "\n"
    pos = len(data)
    return [Edit(target.kpath, pos, pos, text if data.endswith(b"\n") else "\n" + text)]


def binary_edits(target: Target, data: bytes, name: str, body: str, plan: Plan) -> list[Edit]:
    """The functor after the file's last functor; registrations beside the file's own ones."""
    fns = [f for f in target.mf.functors if f.path == target.kpath]
    if fns:
        code = SourceFile(data).code
        start = max(f.span.start for f in fns)
        close = code.find(b"\n};", start)
        fpos = _line_end(data, close + 1) if close >= 0 else _after_last_definition(data, target)
    else:
        fpos = _after_last_definition(data, target)
    edits = [Edit(target.kpath, fpos, fpos, "\n" + body)]
    invs = [i for i in find_invocations(SourceFile(data), {target.register_macro}) if i.start > fpos]
    dtypes = list(dict.fromkeys(i for i, _ in plan.pairs()))
    lines = [f"{target.register_macro}({name}, {t});" for t in dtypes]
    plain = [x for x in lines if "bfloat" not in x]
    bf = [x for x in lines if "bfloat" in x]
    guarded = [i for i in invs if b"bfloat" in i.args[-1]]
    first = guarded[0].start if guarded else len(data)
    others = [i for i in invs if b"bfloat" not in i.args[-1] and i.end < first]
    if guarded and target.bfloat_guard:
        gpos = _line_end(data, max(i.end for i in guarded) - 1)
        edits.append(Edit(target.kpath, gpos, gpos, "".join(x + "\n" for x in bf)))
        bf = []
    rpos = _line_end(data, max(i.end for i in others) - 1) if others else len(data)
    text = "".join(x + "\n" for x in plain)
    if bf:
        text += "\n".join(_guarded(bf, target)) + "\n"
    edits.append(Edit(target.kpath, rpos, rpos, text))
    return edits


def binary_host_edits(ix, target: Target, name: str, stub: str) -> list[Edit]:
    """``static void NAME_mps_kernel(TensorIteratorBase& iter) { mps::binary_mps_impl(iter, "NAME"); }``
    after the last registered stub that calls binary_mps_impl, and its REGISTER_DISPATCH after the file's last."""
    data = ix.tree.sources[target.hpath]
    hf = target.hf
    registered = {r.function for r in hf.registrations if r.macro == "REGISTER_DISPATCH"}
    call = re.compile(rb"\bbinary_mps_impl\s*\(")
    fns = [f for f in hf.functions if f.name in registered and call.search(data[f.span.start : f.span.end])]
    fpos = _line_end(data, max(f.span.end for f in fns) - 1) if fns else None
    regs = [r for r in hf.registrations if r.macro == "REGISTER_DISPATCH" and not r.via_macro]
    if fpos is None or not regs:
        fpos = _line_end(data, max(r.span.end for r in regs) - 1) if regs else len(data)
    fn = f"{name}_mps_kernel"
    wrapper, wrapper_edits = promoting_wrapper(ix, target)
    call = target.impl_call.rsplit("binary_mps_impl", 1)[0] + wrapper
    it = iterator_param(ix, stub)  # prelu_stub's activation_fn takes a TensorIterator&: REGISTER_DISPATCH wants it
    stub_text = f'\nstatic void {fn}({it} iter) {{\n  {call}(iter, "{name}");\n}}\n'
    rpos = _line_end(data, max(r.span.end for r in regs) - 1) if regs else fpos
    reg = dispatch_line(data, regs, stub, fn)
    if rpos > fpos:
        return wrapper_edits + [Edit(target.hpath, fpos, fpos, stub_text), Edit(target.hpath, rpos, rpos, reg)]
    return wrapper_edits + [Edit(target.hpath, fpos, fpos, stub_text + reg)]


PROMOTING_WRAPPER = "binary_mps_impl_promoted"
_WRAPPER_TEXT = """
// binary_mps_impl reads both inputs as input(0)'s dtype and a CPU scalar by its raw bytes; TensorIterator
// casts inputs to the common dtype only on CPU, so cast them (on MPS) first, as the MPSGraph ops did.
static void {name}(TensorIteratorBase& iter, const std::string func_name) {{
  const auto common_dtype = iter.common_dtype();
  const auto& input = iter.input(0);
  const auto& other = iter.input(1);
  if (input.scalar_type() == common_dtype && other.scalar_type() == common_dtype && input.is_mps() &&
      other.is_mps()) {{
    binary_mps_impl(iter, func_name);
    return;
  }}
  // TensorIteratorConfig borrows its inputs (add_input of a temporary is deleted): keep the casts alive here
  const auto input_cast = input.to(kMPS, common_dtype);
  const auto other_cast = other.to(kMPS, common_dtype);
  auto cast_iter = TensorIteratorConfig()
                       .add_output(iter.output())
                       .add_input(input_cast)
                       .add_input(other_cast)
                       .check_all_same_dtype(false)
                       .build();
  binary_mps_impl(cast_iter, func_name);
}}
"""


def promoting_wrapper(ix, target: Target) -> tuple[str, list[Edit]]:
    """(name, edits) of the host function generated stubs call instead of binary_mps_impl: it casts the
    inputs to the common dtype on MPS first, so a port does not regress the old graph's mixed-dtype and
    CPU-scalar calls.  The host file's own wrapper when it has one (the body verify recognises,
    rules/launch_conventions.yaml ``promoting_wrapper``), else one added once after binary_mps_impl."""
    data = ix.tree.sources[target.hpath]
    for f in target.hf.functions:
        if f.name != "binary_mps_impl" and promotes(data[f.span.start : f.span.end]):
            return f.name, []
    impl = next((f for f in target.hf.functions if f.name == "binary_mps_impl"), None)
    if impl is None:  # launched through a header's binary_mps_impl: no place for a wrapper, call it as is
        return "binary_mps_impl", []
    pos = _line_end(data, impl.span.end - 1)
    return PROMOTING_WRAPPER, [Edit(target.hpath, pos, pos, _WRAPPER_TEXT.format(name=PROMOTING_WRAPPER))]


def kernel_edits(target: Target, data: bytes, name: str, dag, plan: Plan) -> list[Edit]:
    body = functor(name, dag, plan, dag.source, target.traits)
    if target.convention == "unary_1d":
        return unary_edits(target, data, name, body, plan)
    return binary_edits(target, data, name, body, plan)

"""The Metal text of a gather port (padding, nearest resize): one thread per output element, which reads the input
element its coordinates map to, dim by dim, with 64-bit offsets -- or the pad value where a coordinate falls
outside the input (constant padding)."""

from __future__ import annotations

from migrate.port.reduce.recipes import KernelSpec

PARAMS = (
    "constant T* x0_data [[buffer(0)]]",
    "device R* out0 [[buffer(1)]]",
    "constant long* out_sizes [[buffer(2)]]",
    "constant long* in_sizes [[buffer(3)]]",
    "constant long* in_strides [[buffer(4)]]",
    "constant long* out_strides [[buffer(5)]]",
    "constant long* before [[buffer(6)]]",
    "constant float* scales [[buffer(7)]]",
    "constant float* p [[buffer(8)]]",
    "constant uint& ndim [[buffer(9)]]",
    "uint index [[thread_position_in_grid]]",
)


def gather_text(spec: KernelSpec) -> str:
    """``spec.map`` is the input coordinate from ``o`` (output coordinate), ``n`` (input size), ``b`` (padding
    before) and ``s`` (scale); a coordinate outside [0, n) reads the pad value p[0]."""
    head = ["template <typename T, typename R>", f"kernel void {spec.name}_kernel("]
    head += [f"    {p}," for p in PARAMS[:-1]] + [f"    {PARAMS[-1]}) {{"]
    body = [
        "  long rest = index;",
        "  long in_offset = 0, out_offset = 0;",
        "  bool inside = true;",
        "  for (uint d = ndim; d > 0; --d) {",
        "    const long o = rest % out_sizes[d - 1];",
        "    rest /= out_sizes[d - 1];",
        "    const long n = in_sizes[d - 1], b = before[d - 1];",
        "    const float s = scales[d - 1];",
        f"    const long c = {spec.map};",
        "    inside = inside && c >= 0 && c < n;",
        "    in_offset += (inside ? c : 0) * in_strides[d - 1];",
        "    out_offset += o * out_strides[d - 1];",
        "  }",
        "  out0[out_offset] = inside ? static_cast<R>(x0_data[in_offset]) : R(p[0]);",
        "}",
        "",
    ]
    return "\n".join(head + body)


def gather_macro() -> tuple[str, str]:
    name = "REGISTER_GATHER"
    lines = [
        f"#define {name}(NAME, T, R)",
        '  template [[host_name(#NAME "_" #T)]] kernel void NAME##_kernel<T, R>(',
        *[f"      {p}," for p in PARAMS[:-1]],
        f"      {PARAMS[-1]});",
    ]
    width = max(len(ln) for ln in lines) + 1
    return name, "\n".join(ln.ljust(width) + "\\" for ln in lines[:-1]) + "\n" + lines[-1] + "\n"

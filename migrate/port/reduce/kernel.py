"""The Metal text of a reduction port: one threadgroup per output element (or softmax row), its threads
striding over the reduced elements with 64-bit offsets, partials in the accumulate type, combined across
the threadgroup by the tree's reduction library where it has the combine (c10/metal/reduction_utils.h),
else by a helper written the same way: a barrier all threads reach, then the combine."""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrate.port.reduce.gather import gather_macro, gather_text
from migrate.port.reduce.recipes import KernelSpec, Recipe

THREADS = 256  # threadgroup size cap; the host helper's kReduceThreads says the same
_COMBINE = {
    "sum": "{a} + {b}",
    "prod": "{a} * {b}",
    "max": "::c10::metal::max({a}, {b})",
    "min": "::c10::metal::min({a}, {b})",
    "and": "{a} && {b}",
    "or": "{a} || {b}",
}
_IDENTITY = {"sum": "acc_t(0)", "prod": "acc_t(1)", "and": "true", "or": "false"}  # max/min: an element


@dataclass(frozen=True)
class Library:
    """What the tree's Metal side offers a reduction port."""

    header: str | None  # "c10/metal/reduction_utils.h" when the tree has it
    combines: frozenset[str]  # threadgroup_<combine> the header defines
    bfloat_guard: str | None  # "#if __METAL_VERSION__ >= 310" where the tree guards bfloat


def library_of(sources: dict[str, bytes], root) -> Library:
    from pathlib import Path

    path = Path(root) / "c10/metal/reduction_utils.h"
    header = "c10/metal/reduction_utils.h" if path.exists() else None
    text = path.read_text(errors="replace") if header else ""
    combines = frozenset(re.findall(r"\bthreadgroup_(sum|prod|max|min)\s*\(\s*threadgroup\b", text))
    guard = None
    for p, data in sources.items():
        if p.endswith(".metal") and b"bfloat" in data:
            m = re.search(rb"^(#if\s+__METAL_VERSION__\s*>=\s*310)\s*$", data, re.M)
            if m:
                guard = m.group(1).decode()
                break
    return Library(header, combines, guard)


def preamble(lib: Library) -> str:
    inc = [f"#include <{lib.header}>"] if lib.header else []
    inc += ["#include <c10/metal/utils.h>", "#include <metal_stdlib>"]
    return "\n".join(
        [
            "// Reductions ported from MPSGraph by mps-migrate (one threadgroup per output element).",
            *inc,
            "",
            "using namespace metal;",
            "using namespace c10::metal;",
            "",
            f"#define REDUCE_THREADS {THREADS}",
            "",
            "// The offset of element `linear` (row-major over dims [first, last)) along `strides`, in 64 bits.",
            "inline long reduce_offset(constant long* sizes, constant long* strides, uint first, uint last, long linear) {",
            "  long offset = 0;",
            "  for (uint d = last; d > first; --d) {",
            "    offset += (linear % sizes[d - 1]) * strides[d - 1];",
            "    linear /= sizes[d - 1];",
            "  }",
            "  return offset;",
            "}",
            "",
        ]
    )


def own_combine(combine: str) -> str:
    """A threadgroup combine the tree's library lacks, shaped like the library's: barrier, then fold."""
    return "\n".join(
        [
            "template <typename A>",
            f"inline A threadgroup_{combine}_all(threadgroup A* data, uint size) {{",
            "  ::metal::threadgroup_barrier(::metal::mem_flags::mem_threadgroup);",
            "  A rc = data[0];",
            "  for (uint i = 1; i < size; ++i) {",
            f"    rc = {_COMBINE[combine].format(a='rc', b='data[i]')};",
            "  }",
            "  return rc;",
            "}",
            "",
        ]
    )


def combine_call(lib: Library, combine: str) -> str:
    return f"threadgroup_{combine}" if combine in lib.combines else f"threadgroup_{combine}_all"


def _params(spec: KernelSpec) -> list[str]:
    """The layout first (fixed slots, bound by one mtl_setArgs), then the tensors and their strides."""
    n = spec.inputs + spec.n_outputs
    ins = [f"constant T* x{k}_data [[buffer({4 + k})]]" for k in range(spec.inputs)]
    outs = [f"device R* out{k} [[buffer({4 + spec.inputs + k})]]" for k in range(spec.n_outputs)]
    strides = [f"constant long* strides{k} [[buffer({4 + n + k})]]" for k in range(n)]
    return [
        "constant long* sizes [[buffer(0)]]",
        "constant uint2& ndim [[buffer(1)]]",
        "constant long& reduce_size [[buffer(2)]]",
        "constant float* p [[buffer(3)]]",
        *ins,
        *outs,
        *strides,
        "uint group [[threadgroup_position_in_grid]]",
        "uint tid [[thread_position_in_threadgroup]]",
        "uint threads [[threads_per_threadgroup]]",
    ]


def _bases(spec: KernelSpec) -> list[str]:
    n = spec.inputs + spec.n_outputs
    return [f"  const long base{k} = reduce_offset(sizes, strides{k}, 0, ndim.x, group);" for k in range(n)]


def _load(spec: KernelSpec, r: str = "r") -> list[str]:
    lines = []
    kind = "T" if spec.acc else "acc_t"  # a count or a truth value tests the element itself
    for k in range(spec.inputs):
        lines.append(
            f"    const {kind} x{k} = static_cast<{kind}>(x{k}_data[base{k} + "
            f"reduce_offset(sizes, strides{k}, ndim.x, ndim.x + ndim.y, {r})]);"
        )
    return lines


def _acc(spec: KernelSpec) -> str:
    return spec.acc or "opmath_t<T>"  # long (counts), bool (all/any), else the opmath type


def _body_reduce(spec: KernelSpec, lib: Library) -> list[str]:
    out = spec.inputs
    if spec.combine in _IDENTITY:
        init = [f"  acc_t acc = {_IDENTITY[spec.combine]};"]
    else:  # max/min: any element of the row is an identity; an empty row has none (the host refuses it first)
        first = spec.map.replace("x0", "x0f")
        kind = "T" if spec.acc else "acc_t"
        init = [
            "  if (reduce_size == 0) {",
            "    return;",
            "  }",
            "  const long first = tid < reduce_size ? long(tid) : 0;",
            f"  const {kind} x0f = static_cast<{kind}>(x0_data[base0 + "
            "reduce_offset(sizes, strides0, ndim.x, ndim.x + ndim.y, first)]);",
            f"  acc_t acc = {first};",
        ]
    return [
        "  using acc_t = " + _acc(spec) + ";",
        "  threadgroup acc_t partial[REDUCE_THREADS];",
        *_bases(spec),
        *init,
        "  for (long r = tid; r < reduce_size; r += threads) {",
        *_load(spec),
        f"    acc = {_COMBINE[spec.combine].format(a='acc', b=spec.map)};",
        "  }",
        "  partial[tid] = acc;",
        f"  const acc_t total = {combine_call(lib, spec.combine)}(partial, threads);",
        *(["  const long n = reduce_size;"] if re.search(r"\bn\b", spec.finalize) else []),
        "  if (tid == 0) {",
        f"    out{0}[base{out}] = static_cast<R>({spec.finalize});",
        "  }",
    ]


def _body_arg(spec: KernelSpec) -> list[str]:
    greater = "true" if spec.combine == "max" else "false"
    out = spec.inputs
    return [
        "  using acc_t = opmath_t<T>;",
        "  threadgroup acc_t values[REDUCE_THREADS];",
        "  threadgroup long indices[REDUCE_THREADS];",
        *_bases(spec),
        "  acc_t best = 0;",
        "  long at = -1;",
        "  for (long r = tid; r < reduce_size; r += threads) {",
        *_load(spec),
        f"    if (at < 0 || arg_better(x0, r, best, at, {greater})) {{",
        "      best = x0;",
        "      at = r;",
        "    }",
        "  }",
        "  values[tid] = best;",
        "  indices[tid] = at;",
        "  ::metal::threadgroup_barrier(::metal::mem_flags::mem_threadgroup);",
        "  if (tid == 0) {",
        "    for (uint i = 1; i < threads; ++i) {",
        f"      if (indices[i] >= 0 && (at < 0 || arg_better(values[i], indices[i], best, at, {greater}))) {{",
        "        best = values[i];",
        "        at = indices[i];",
        "      }",
        "    }",
        f"    out0[base{out}] = static_cast<R>(at);",
        "  }",
    ]


ARG_HELPER = "\n".join(
    [
        "// argmax/argmin as torch: NaN is the extreme, and of equal values the lower index wins.",
        "template <typename A>",
        "inline bool arg_better(A v, long i, A best, long at, bool greater) {",
        "  const bool v_nan = v != v, best_nan = best != best;",
        "  if (v_nan || best_nan) {",
        "    return v_nan && (!best_nan || i < at);",
        "  }",
        "  if (v == best) {",
        "    return i < at;",
        "  }",
        "  return greater ? v > best : v < best;",
        "}",
        "",
    ]
)

WELFORD_HELPER = "\n".join(
    [
        "// Two (mean, M2, count) partials combined (Chan et al.), as torch's WelfordOps combines them.",
        "inline float3 welford_merge(float3 a, float3 b) {",
        "  if (a.z == 0) {",
        "    return b;",
        "  }",
        "  if (b.z == 0) {",
        "    return a;",
        "  }",
        "  const float n = a.z + b.z;",
        "  const float delta = b.x - a.x;",
        "  return float3(a.x + delta * b.z / n, a.y + b.y + delta * delta * a.z * b.z / n, n);",
        "}",
        "",
    ]
)


def _body_welford(spec: KernelSpec) -> list[str]:
    out = spec.inputs
    writes = []
    for k, what in enumerate(spec.outputs):
        value = {
            "var": "var",
            "std": "::metal::precise::sqrt(var)",
            "mean": "(acc.z == 0 ? NAN : acc.x)",
        }[what]
        writes.append(f"    out{k}[base{out + k}] = static_cast<R>({value});")
    return [
        "  threadgroup float3 partial[REDUCE_THREADS];",
        *_bases(spec),
        "  float3 acc = float3(0, 0, 0);  // mean, M2, count",
        "  for (long r = tid; r < reduce_size; r += threads) {",
        "    const float x = static_cast<float>(x0_data[base0 + "
        "reduce_offset(sizes, strides0, ndim.x, ndim.x + ndim.y, r)]);",
        "    acc.z += 1;",
        "    const float delta = x - acc.x;",
        "    acc.x += delta / acc.z;",
        "    acc.y += delta * (x - acc.x);",
        "  }",
        "  partial[tid] = acc;",
        "  ::metal::threadgroup_barrier(::metal::mem_flags::mem_threadgroup);",
        "  if (tid == 0) {",
        "    for (uint i = 1; i < threads; ++i) {",
        "      acc = welford_merge(acc, partial[i]);",
        "    }",
        "    const float var = acc.y / ::c10::metal::max(0.0f, acc.z - p[0]);",
        *writes,
        "  }",
    ]


def _body_row(spec: KernelSpec, lib: Library) -> list[str]:
    out = spec.inputs
    lines = [
        "  using acc_t = opmath_t<T>;",
        "  threadgroup acc_t partial[REDUCE_THREADS];",
        *_bases(spec),
        "  if (reduce_size == 0) {",
        "    return;",
        "  }",
        "  acc_t m = 0;",
    ]
    if spec.row_max:
        lines += [
            "  {",
            "    const long r = tid < reduce_size ? long(tid) : 0;",
            *["  " + ln for ln in _load(spec)],
            f"    m = {spec.row_max};",
            "  }",
            "  for (long r = tid; r < reduce_size; r += threads) {",
            *_load(spec),
            f"    m = ::c10::metal::max(m, acc_t({spec.row_max}));",
            "  }",
            "  partial[tid] = m;",
            f"  m = {combine_call(lib, 'max')}(partial, threads);",
            "  ::metal::threadgroup_barrier(::metal::mem_flags::mem_threadgroup);",
        ]
    lines += [
        "  acc_t s = 0;",
        "  for (long r = tid; r < reduce_size; r += threads) {",
        *_load(spec),
        f"    s += {spec.row_sum};",
        "  }",
        "  partial[tid] = s;",
        f"  s = {combine_call(lib, 'sum')}(partial, threads);",
        "  for (long r = tid; r < reduce_size; r += threads) {",
        *_load(spec),
        f"    out0[base{out} + reduce_offset(sizes, strides{out}, ndim.x, ndim.x + ndim.y, r)] = "
        f"static_cast<R>({spec.row_write});",
        "  }",
    ]
    return lines


def kernel_text(spec: KernelSpec, lib: Library) -> str:
    if spec.form == "gather":
        return gather_text(spec)
    body = {
        "reduce": lambda: _body_reduce(spec, lib),
        "arg": lambda: _body_arg(spec),
        "welford": lambda: _body_welford(spec),
        "row": lambda: _body_row(spec, lib),
    }[spec.form]()
    params = _params(spec)
    head = [
        "template <typename T, typename R>",
        f"kernel void {spec.name}_kernel(",
        *[f"    {p}," for p in params[:-1]],
        f"    {params[-1]}) {{",
    ]
    return "\n".join([*head, *body, "}", ""])


def register_macro(spec: KernelSpec) -> tuple[str, str]:
    """(macro name, its definition): the explicit instantiation of a kernel of this signature."""
    if spec.form == "gather":
        return gather_macro()
    name = f"REGISTER_{spec.form.upper()}_{spec.inputs}_{spec.n_outputs}"
    params = _params(spec)
    lines = [
        f"#define {name}(NAME, T, R)",
        '  template [[host_name(#NAME "_" #T)]] kernel void NAME##_kernel<T, R>(',
        *[f"      {p}," for p in params[:-1]],
        f"      {params[-1]});",
    ]
    width = max(len(ln) for ln in lines) + 1
    text = "\n".join(ln.ljust(width) + "\\" for ln in lines[:-1]) + "\n" + lines[-1] + "\n"
    return name, text


def out_type(spec: KernelSpec, t: str) -> str:
    if spec.out == "long":
        return "long"
    if spec.out == "bool":
        return "uchar" if t == "uchar" else "bool"
    return t


def registrations(spec: KernelSpec, lib: Library) -> str:
    name, _ = register_macro(spec)
    lines, guarded = [], []
    for t in spec.dtypes:
        line = f"{name}({spec.name}, {t}, {out_type(spec, t)});"
        (guarded if t == "bfloat" and lib.bfloat_guard else lines).append(line)
    if guarded:
        lines += [lib.bfloat_guard, *guarded, "#endif"]
    return "\n".join(lines) + "\n"


def section(recipe: Recipe, lib: Library, existing: str) -> str:
    """The recipe's part of a kernel file whose text so far is ``existing`` (shared pieces written once)."""
    parts = [f"// {recipe.family}: ported from MPSGraph by mps-migrate"]
    have = existing
    for name, text in recipe.helpers.items():
        if not re.search(rf"\b{name}\s*\(", have):
            parts.append(text + "\n")
    for spec in recipe.kernels:
        needs = []
        if spec.form == "reduce" and spec.combine not in lib.combines:
            needs.append(spec.combine)
        if spec.form == "row":
            needs += [c for c in ("max", "sum") if c not in lib.combines]
        for c in needs:
            if f"threadgroup_{c}_all(" not in have:
                parts.append(own_combine(c))
                have += parts[-1]
        if spec.form == "arg" and "arg_better(" not in have:
            parts.append(ARG_HELPER)
            have += ARG_HELPER
        if spec.form == "welford" and "welford_merge(" not in have:
            parts.append(WELFORD_HELPER)
            have += WELFORD_HELPER
        if re.search(rf"\b{spec.name}_kernel\(", have):
            continue
        parts.append(kernel_text(spec, lib))
        macro, definition = register_macro(spec)
        if f"#define {macro}(" not in have:
            parts.append(definition)
            have += definition
        parts.append(registrations(spec, lib))
        have += parts[-2] + parts[-1]
    return "\n".join(parts)

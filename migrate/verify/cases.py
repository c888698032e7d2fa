"""Inputs: per dtype x layout, with random values plus special values.

A ``Case`` holds the arguments as the user would pass them (tensors, Python
numbers, 0-dim CPU tensors) and an optional ``out=`` tensor.  Everything is
generated from a fixed seed (reported).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch

from migrate.verify.dtypes import table

FLOATS = (torch.float32, torch.float16, torch.bfloat16)


@dataclass(frozen=True)
class PyScalar:
    """A Python number: the host sees it as a wrapped 0-dim CPU tensor."""

    value: object


@dataclass(frozen=True)
class CpuScalar:
    """A 0-dim CPU tensor passed to an MPS op (bound by value)."""

    tensor: torch.Tensor


@dataclass
class Case:
    dtype: torch.dtype
    layout: str
    args: tuple
    out: torch.Tensor | None = None
    seed: int = 0
    expected_dtype: torch.dtype | None = None  # set from the first reference that ran
    # an OpInfo sample's run-time scalar arguments: as it passes them (the reference gets them too) and as the
    # operator receives them (name -> value, defaults filled in: what the launch binds for this case)
    scalar_args: tuple = ()
    scalar_kwargs: dict | None = None
    scalars: dict | None = None

    def reference_args(self) -> list:
        return [a.value if isinstance(a, PyScalar) else a.tensor if isinstance(a, CpuScalar) else a for a in self.args]


def specials(dtype: torch.dtype) -> list:
    """+-0, +-inf, NaN, subnormals, extremes, 1, -1 (floats); edge values (integers)."""
    if dtype == torch.bool:
        return [False, True]
    if dtype.is_complex:
        r = specials(torch.float32)
        return [complex(a, b) for a, b in zip(r, reversed(r))]
    if dtype.is_floating_point:
        fi = torch.finfo(dtype)
        sub = fi.smallest_normal / 4
        return [
            0.0,
            -0.0,
            float("inf"),
            float("-inf"),
            float("nan"),
            sub,
            -sub,
            fi.max,
            -fi.max,
            fi.smallest_normal,
            fi.eps,
            1.0,
            -1.0,
            0.5,
        ]
    ii = torch.iinfo(dtype)
    return sorted({ii.min, ii.min + 1, -1, 0, 1, 2, ii.max - 1, ii.max})


def random_values(dtype: torch.dtype, shape, gen: torch.Generator, sprinkle: bool = True) -> torch.Tensor:
    n = 1
    for s in shape:
        n *= s
    if dtype == torch.bool:
        flat = torch.randint(0, 2, (n,), generator=gen).bool()
    elif dtype.is_complex:
        flat = torch.complex(torch.randn(n, generator=gen) * 3, torch.randn(n, generator=gen) * 3).to(dtype)
    elif dtype.is_floating_point:
        flat = (torch.randn(n, generator=gen) * 3).to(dtype)
    else:
        ii = torch.iinfo(dtype)
        flat = torch.randint(max(ii.min, -100), min(ii.max, 100) + 1, (n,), generator=gen, dtype=torch.int64).to(dtype)
    if sprinkle and n:
        sp = torch.tensor(specials(dtype), dtype=dtype)
        idx = torch.randperm(n, generator=gen)[: max(1, n // 4)]
        flat[idx] = sp[torch.arange(idx.numel()) % sp.numel()]
    return flat.reshape(shape)


def special_grid(dtype: torch.dtype, arity: int) -> list[torch.Tensor]:
    """Every combination of special values across the operands (flat)."""
    sp = specials(dtype)
    combos = list(itertools.product(sp, repeat=arity)) if arity <= 2 else [(a, a, a) for a in sp]
    return [torch.tensor([c[i] for c in combos], dtype=dtype) for i in range(arity)]


def ramp(dtype: torch.dtype, arity: int) -> list[torch.Tensor]:
    """Integers -120..120 (within the dtype's range): sweeps domain edges such as exp's
    subnormal and overflow ranges.  Operand k is rotated by k steps."""
    if dtype == torch.bool:
        return [torch.zeros(0, dtype=dtype) for _ in range(arity)]
    lo, hi = (
        (-120, 120)
        if dtype.is_floating_point or dtype.is_complex
        else (max(-120, torch.iinfo(dtype).min), min(120, torch.iinfo(dtype).max))
    )
    r = torch.arange(lo, hi + 1, dtype=torch.float64)
    return [torch.roll(r, 7 * k).to(dtype) for k in range(arity)]


def _partner(dtype: torch.dtype) -> torch.dtype:
    """A second input dtype that forces the cast kernels."""
    if dtype in FLOATS:
        return torch.int32
    if dtype.is_complex:
        return torch.float32
    if dtype == torch.bool:
        return torch.uint8
    return torch.int64 if dtype != torch.int64 else torch.int32


def _py_scalar(dtype: torch.dtype):
    if dtype == torch.bool:
        return True
    if dtype.is_floating_point or dtype.is_complex:
        return -2.0
    return -3


def build_cases(dtype: torch.dtype, arity: int, layouts: list[str], seed: int) -> list[Case]:
    gen = torch.Generator().manual_seed(seed)
    rnd = lambda shape, dt=dtype: random_values(dt, shape, gen)  # noqa: E731
    cfg = table()["sizes"]
    n_contig, n_odd = cfg["contiguous"], cfg["odd"]
    cases: list[Case] = []

    def add(layout, args, out=None):
        if layout in layouts:
            cases.append(Case(dtype, layout, tuple(args), out, seed))

    grid = special_grid(dtype, arity)
    add("contiguous", [torch.cat([rnd((n_contig,)), g, r]) for g, r in zip(grid, ramp(dtype, arity))])
    add("empty", [rnd((0, 3)) for _ in range(arity)])
    add("zero_dim", [rnd(()) for _ in range(arity)])
    add("odd_size", [rnd((n_odd,)) for _ in range(arity)])
    base = [rnd((13, 7)) for _ in range(arity)]
    if arity == 1:
        # a functional op allocates its output like the input (iteration stays dense): use out=
        add("transposed", [base[0].t()], torch.empty(7, 13, dtype=dtype))
    else:
        add("transposed", [base[0].t(), *(rnd((7, 13)) for _ in range(arity - 1))])
    add("strided", [rnd((7, 26))[:, ::2] for _ in range(arity)])
    if arity == 1:
        add("broadcast", [rnd((1, 13)).expand(7, 13)], torch.empty(7, 13, dtype=dtype))
    else:
        add("broadcast", [rnd((7, 13)), *(rnd((13,)) for _ in range(arity - 1))])
        add("broadcast_lhs", [rnd((13,)), *(rnd((7, 13)) for _ in range(arity - 1))])
        add("broadcast_stride0", [rnd((7, 1)), *(rnd((7, 13)) for _ in range(arity - 1))])
    store = rnd((8,))
    add("zero_dim_offset", [store[5]] + [rnd((n_odd,)) for _ in range(arity - 1)])
    if arity >= 2:
        add("python_scalar", [rnd((n_odd,)), PyScalar(_py_scalar(dtype)), *(rnd((n_odd,)) for _ in range(arity - 2))])
        add("python_scalar_lhs", [PyScalar(_py_scalar(dtype)), *(rnd((n_odd,)) for _ in range(arity - 1))])
        if dtype in FLOATS or dtype.is_complex:
            add("python_int_scalar", [rnd((n_odd,)), PyScalar(3), *(rnd((n_odd,)) for _ in range(arity - 2))])
        cpu_store = rnd((8,))
        add("cpu_scalar_offset", [rnd((n_odd,)), CpuScalar(cpu_store[6]), *(rnd((n_odd,)) for _ in range(arity - 2))])
        p = _partner(dtype)
        add("mixed_dtype", [rnd((n_odd,)), rnd((n_odd,), p), *(rnd((n_odd,)) for _ in range(arity - 2))])
        add("mixed_strided", [rnd((13, 7)).t(), rnd((7, 13), p), *(rnd((7, 13)) for _ in range(arity - 2))])
    else:
        outs = {torch.float32: torch.float16, torch.float16: torch.float32, torch.bfloat16: torch.float32}
        if dtype in outs:
            add("out_cast", [rnd((n_odd,))], torch.empty(n_odd, dtype=outs[dtype]))
    return cases


def nonzero_divisors(cases: list[Case], family: str) -> list[Case]:
    """``cases`` with no zero divisor in the integer ones where torch CPU refuses it (rules/verify.yaml
    ``nonzero_divisor``): a zero becomes 1 in the operand's storage (views keep their strides)."""
    k = (table().get("nonzero_divisor") or {}).get(family)
    if k is None:
        return cases
    for c in cases:
        if c.dtype.is_floating_point or c.dtype.is_complex or k >= len(c.args):
            continue
        a = c.args[k]
        if isinstance(a, PyScalar):
            if a.value == 0:
                c.args = c.args[:k] + (PyScalar(1),) + c.args[k + 1 :]
            continue
        t = a.tensor if isinstance(a, CpuScalar) else a
        if isinstance(t, torch.Tensor) and not (t.is_floating_point() or t.is_complex()):
            flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
            flat[flat == 0] = 1
    return _no_trapping_dividend(cases, family)


def _no_trapping_dividend(cases: list[Case], family: str) -> list[Case]:
    """Integer cases without INT_MIN in the dividend where torch CPU would trap on INT_MIN / -1
    (rules/verify.yaml ``trapping_dividend``): it becomes INT_MIN + 1 in the operand's storage."""
    k = (table().get("trapping_dividend") or {}).get(family)
    if k is None:
        return cases
    for c in cases:
        if c.dtype.is_floating_point or c.dtype.is_complex or c.dtype == torch.bool or k >= len(c.args):
            continue
        a = c.args[k]
        low = torch.iinfo(c.dtype).min
        if isinstance(a, PyScalar):
            if a.value == low:
                c.args = c.args[:k] + (PyScalar(low + 1),) + c.args[k + 1 :]
            continue
        t = a.tensor if isinstance(a, CpuScalar) else a
        if isinstance(t, torch.Tensor) and t.dtype.is_signed and not (t.is_floating_point() or t.is_complex()):
            flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
            flat[flat == torch.iinfo(t.dtype).min] = torch.iinfo(t.dtype).min + 1
    return cases

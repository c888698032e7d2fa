"""Element-wise comparison with torch.testing's default tolerances.

NaN positions must match, infinities must be equal, finite values must be
within ``atol + rtol * |expected|``; integer and bool outputs are exact.
Signed zeros (0.0 vs -0.0) are counted, not failed.

Where torch CPU is not self-consistent, ``excuse`` holds its other answers for the same inputs
(rules/verify.yaml ``reference_policy``): an element that misses the reference but matches one of
them is counted as excused, with a note giving the first example, not failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from migrate.verify.dtypes import dtype_name, table

_INT_VIEW = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}


@dataclass
class Mismatch:
    index: tuple[int, ...]
    actual: object
    expected: object
    inputs: tuple
    reason: str  # "value" | "nan" | "dtype" | "shape" | "input modified"

    def describe(self) -> str:
        ins = ", ".join(_fmt(v) for v in self.inputs)
        at = list(self.index) if self.index else "()"
        return f"at {at}: got {_fmt(self.actual)}, expected {_fmt(self.expected)} (inputs: {ins}) [{self.reason}]"


@dataclass
class Stats:
    elements: int = 0
    mismatches: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_ulp: int = 0
    signed_zeros: int = 0
    excused: int = 0  # elements that missed the reference but matched one of its other answers
    first: Mismatch | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    def merge(self, other: "Stats") -> None:
        self.elements += other.elements
        self.mismatches += other.mismatches
        self.max_abs = max(self.max_abs, other.max_abs)
        self.max_rel = max(self.max_rel, other.max_rel)
        self.max_ulp = max(self.max_ulp, other.max_ulp)
        self.signed_zeros += other.signed_zeros
        self.excused += other.excused
        if self.first is None:
            self.first = other.first
        heads = {n.split(":", 1)[0] for n in self.notes}  # one example per kind of note
        self.notes += [n for n in other.notes if n.split(":", 1)[0] not in heads]


def _fmt(v) -> str:
    if isinstance(v, torch.Tensor):
        v = v.item()
    if isinstance(v, float):
        return repr(v) if v == v else "nan"
    return repr(v)


def tolerance(dtype: torch.dtype, atol: float | None, rtol: float | None) -> tuple[float, float]:
    base = table()["tolerances"].get(dtype_name(dtype), {"rtol": 0.0, "atol": 0.0})
    return (base["rtol"] if rtol is None else rtol), (base["atol"] if atol is None else atol)


def _ordered(x: torch.Tensor) -> torch.Tensor:
    """Floats mapped to integers whose differences count ULPs."""
    iv = x.contiguous().view(_INT_VIEW[x.dtype]).to(torch.int64)
    bits = 8 * x.element_size()
    sign = 1 << (bits - 1)
    iv = iv & ((1 << bits) - 1)
    return torch.where(iv >= sign, sign - iv, iv)


def _ulps(a: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    if a.dtype in _INT_VIEW:
        return (_ordered(a) - _ordered(e)).abs()
    return torch.zeros(a.shape, dtype=torch.int64)


def _misses(actual: torch.Tensor, expected: torch.Tensor, r: float, a_tol: float) -> torch.Tensor:
    """Element-wise: ``actual`` misses ``expected`` (the rules of ``compare``)."""
    parts = (
        [(torch.view_as_real(actual)[..., k], torch.view_as_real(expected)[..., k]) for k in range(2)]
        if expected.dtype.is_complex
        else [(actual, expected)]
    )
    bad = torch.zeros(expected.shape, dtype=torch.bool)
    for a, e in parts:
        if not a.is_floating_point():
            bad |= a != e
            continue
        a64, e64 = a.to(torch.float64), e.to(torch.float64)
        an, en = a64.isnan(), e64.isnan()
        finite = a64.isfinite() & e64.isfinite()
        diff = torch.where(finite, (a64 - e64).abs(), torch.zeros_like(a64))
        bad |= (an != en) | (~finite & ~an & ~en & (a64 != e64)) | (finite & (diff > a_tol + r * e64.abs()))
    return bad


def compare(
    actual: torch.Tensor,
    expected: torch.Tensor,
    inputs_at,
    atol: float | None = None,
    rtol: float | None = None,
    excuse: list[tuple[str, torch.Tensor]] = (),
) -> Stats:
    """``inputs_at(index) -> tuple`` gives the inputs of one output element; ``excuse``: (why, tensor)
    pairs, other answers of the reference for the same inputs (see the module doc)."""
    st = Stats(elements=expected.numel())
    if actual.shape != expected.shape:
        st.mismatches = max(1, expected.numel())
        st.first = Mismatch((), tuple(actual.shape), tuple(expected.shape), (), "shape")
        return st
    if actual.dtype != expected.dtype:
        st.mismatches = max(1, expected.numel())
        st.first = Mismatch((), str(actual.dtype), str(expected.dtype), (), "dtype")
        return st
    if expected.numel() == 0:
        return st
    dt = expected.dtype
    if dt.is_complex:
        parts = [(torch.view_as_real(actual)[..., k], torch.view_as_real(expected)[..., k]) for k in range(2)]
    else:
        parts = [(actual, expected)]
    bad = torch.zeros(expected.shape, dtype=torch.bool)
    nan_bad = torch.zeros_like(bad)
    r, a_tol = tolerance(dt, atol, rtol)
    for a, e in parts:
        if not (a.is_floating_point()):
            bad |= a != e
            diff = (a.to(torch.float64) - e.to(torch.float64)).abs()
            st.max_abs = max(st.max_abs, float(diff.max()))
            continue
        a64, e64 = a.to(torch.float64), e.to(torch.float64)
        an, en = a64.isnan(), e64.isnan()
        nan_bad |= an != en
        finite = a64.isfinite() & e64.isfinite()
        inf_bad = ~finite & ~an & ~en & (a64 != e64)
        diff = torch.where(finite, (a64 - e64).abs(), torch.zeros_like(a64))
        val_bad = finite & (diff > a_tol + r * e64.abs())
        bad |= inf_bad | val_bad | (an != en)
        st.max_abs = max(st.max_abs, float(diff.max()))
        rel = torch.where(finite & (e64 != 0), diff / e64.abs(), torch.zeros_like(diff))
        st.max_rel = max(st.max_rel, float(rel.max()))
        both = finite & ~an & ~en
        if both.any():
            st.max_ulp = max(st.max_ulp, int(_ulps(a, e)[both].max()))
        zeros = (a64 == 0) & (e64 == 0) & (a64.signbit() != e64.signbit())
        st.signed_zeros += int(zeros.sum())
    for why, alt in excuse:
        if not bad.any():
            break
        if alt.shape != expected.shape or alt.dtype != expected.dtype:
            continue
        ok = bad & ~_misses(actual, alt, r, a_tol)
        if ok.any():
            flat = int(ok.reshape(-1).nonzero()[0])
            idx = (
                tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), expected.shape)) if expected.dim() else ()
            )
            st.excused += int(ok.sum())
            st.notes.append(
                f"{why}: e.g. inputs "
                f"({', '.join(_fmt(v) for v in inputs_at(idx))}): torch-cpu {_fmt(expected.reshape(-1)[flat])}, "
                f"it {_fmt(alt.reshape(-1)[flat])}, kernel {_fmt(actual.reshape(-1)[flat])}"
            )
            bad &= ~ok
            nan_bad &= ~ok
    st.mismatches = int(bad.sum())
    if st.mismatches:
        flat = int(bad.reshape(-1).nonzero()[0])
        idx = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), expected.shape)) if expected.dim() else ()
        reason = "nan" if bool(nan_bad.reshape(-1)[flat]) else "value"
        st.first = Mismatch(
            idx, actual.reshape(-1)[flat].item(), expected.reshape(-1)[flat].item(), tuple(inputs_at(idx)), reason
        )
    return st

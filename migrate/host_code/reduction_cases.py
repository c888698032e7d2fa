"""verify's own cases for reduction, softmax, norm and loss families on the host path: what OpInfo samples rarely
hold -- NaN and infinities in a row, rows long enough that half accumulation shows, transposed and sliced inputs,
several and negative dims with and without keepdim, zero-size dims. Worker-side (imports torch)."""

from __future__ import annotations

import math

import torch

# family -> (aten overload, how a case's arguments are laid out)
CALLS = {
    "sum": ("sum.dim_IntList", "dims"),
    "nansum": ("nansum.default", "dims"),
    "mean": ("mean.dim", "dims"),
    "amax": ("amax.default", "dims"),
    "amin": ("amin.default", "dims"),
    "var": ("var.correction", "correction"),
    "std": ("std.correction", "correction"),
    "var_mean": ("var_mean.correction", "correction"),
    "std_mean": ("std_mean.correction", "correction"),
    "prod": ("prod.dim_int", "dim"),
    "argmax": ("argmax.default", "dim"),
    "argmin": ("argmin.default", "dim"),
    "all": ("all.dim", "dim"),
    "any": ("any.dim", "dim"),
    "count_nonzero": ("count_nonzero.dim_IntList", "dims_only"),
    "linalg_vector_norm": ("linalg_vector_norm.default", "norm"),
    "norm": ("norm.ScalarOpt_dim", "norm"),
    "_softmax": ("_softmax.default", "softmax"),
    "_log_softmax": ("_log_softmax.default", "softmax"),
    "mse_loss": ("mse_loss.default", "loss"),
    "huber_loss": ("huber_loss.default", "loss_param"),
    "smooth_l1_loss": ("smooth_l1_loss.default", "loss_param"),
    "binary_cross_entropy": ("binary_cross_entropy.default", "bce"),
}
_SEED = 7


def _tensors(dtype: torch.dtype) -> list[tuple[str, torch.Tensor]]:
    gen = torch.Generator().manual_seed(_SEED)
    if dtype.is_floating_point:

        def make(*shape):
            return (torch.rand(shape, generator=gen) * 4 - 2).to(dtype)
    elif dtype == torch.bool:

        def make(*shape):
            return torch.randint(0, 2, shape, generator=gen).bool()
    else:

        def make(*shape):
            return torch.randint(0 if dtype == torch.uint8 else -3, 4, shape, generator=gen).to(dtype)

    out = [
        ("3d", make(3, 5, 7)),
        ("transposed", make(9, 6).t()),
        ("sliced", make(10, 9)[::2, 1:]),
        ("zero rows", make(0, 4)),
    ]
    if dtype.is_floating_point:
        # rows longer than a threadgroup, so each thread folds several elements (a NaN meets a number there)
        special = make(4, 600)
        special[1, 5], special[2, 0], special[3, 7], special[0, 3] = math.nan, math.nan, math.inf, -math.inf
        out.append(("nan and inf", special))
        # 64 elements per thread of a constant: rounding every addition to half drifts 0.7%; 77/256 has 7 bits, so
        # float sums (and sums of squares) stay exact and only the accumulate type decides
        out.append(("long rows", torch.full((2, 16384), 77 / 256, dtype=dtype)))
    return out


def _dims(x: torch.Tensor) -> list:
    if x.dim() == 3:
        return [[0, 2], [-2], [0, 1, 2]]
    return [[0], [-1]]


def _arguments(kind: str, x: torch.Tensor, dtype: torch.dtype) -> list[tuple[str, list, dict]]:
    out = []
    if kind in ("dims", "correction", "dims_only", "dim", "norm"):
        for dims in _dims(x):
            for keepdim in (False, True):
                label = f"dims {dims}{' keepdim' if keepdim else ''}"
                if kind == "dims":
                    out.append((label, [x, dims, keepdim], {}))
                elif kind == "correction":
                    out.append((label, [x, dims], {"correction": 0 if keepdim else 1, "keepdim": keepdim}))
                elif kind == "dim" and len(dims) == 1:
                    out.append((label, [x, dims[0], keepdim], {}))
                elif kind == "norm":  # every order torch special-cases, once per tensor
                    first = dims == _dims(x)[0] and not keepdim
                    for ord_ in (2, 1, 0, math.inf, -math.inf, 3.5) if first else (2,):
                        out.append((f"{label} ord {ord_}", [x, ord_, dims, keepdim], {}))
                elif kind == "dims_only" and not keepdim:
                    out.append((label, [x, dims], {}))
    elif kind == "softmax":
        for dim in range(-1, x.dim()):
            out.append((f"dim {dim}", [x, dim, False], {}))
    elif kind in ("loss", "loss_param", "bce"):
        gen = torch.Generator().manual_seed(_SEED + 1)
        target = torch.rand(x.shape, generator=gen).to(dtype)
        xs = x.abs().clamp(0.01, 0.99) if kind == "bce" else x  # BCE takes probabilities
        for reduction in (0, 1, 2):
            extra = [0.5] if kind == "loss_param" else []
            args = [xs, target, None, reduction] if kind == "bce" else [xs, target, reduction, *extra]
            out.append((f"reduction {reduction}", args, {}))
    return out


def reduction_cases(family: str, dtypes: list[torch.dtype]) -> list[dict]:
    """Case dicts (without index and references) for the family, or none when it is no reduction family."""
    if family not in CALLS:
        return []
    overload, kind = CALLS[family]
    cases = []
    for dtype in dtypes:
        for label, x in _tensors(dtype):
            if kind == "bce" and label == "nan and inf":
                continue  # CPU checks 0 <= input <= 1 on the host; an MPS kernel cannot without a readback (MPS011)
            for what, args, kwargs in _arguments(kind, x, dtype):
                cases.append({
                    "layout": f"{label}, {what}", "dtype": str(dtype).removeprefix("torch."), "call": ("aten", overload),
                    "args": args, "kwargs": kwargs, "cpu_args": [], "exact": True,
                })  # fmt: skip
    return cases

"""The MPSGraph emulation's evaluator, in the worker: the shim (``kernels/host_shim/runtime/mpsgraph.mm``) records
each node a host file builds and asks here for its dtype and shape (``infer``, on meta tensors) and, when the graph
runs, for its values (``run``, torch CPU ops on the bound buffers). Selector semantics come from
``rules/mpsgraph.yaml``: the elementwise ``ops`` (port's table) by their ``torch`` function, the ``emulation.graph``
selectors by the evaluators here. A selector in neither raises, naming it."""

from __future__ import annotations

import ctypes
import json
from functools import lru_cache

import torch

from migrate.port.rules import torch_fn

from .graph_table import arg_kinds, graph_selectors, raw, shim_table  # noqa: F401 - re-exported

EVALUATOR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)

MPS_DTYPES = {
    0x10000020: torch.float32, 0x10000010: torch.float16, 0x90000010: torch.bfloat16,
    0x11000040: torch.complex64, 0x11000020: torch.complex32,
    0x20000008: torch.int8, 0x20000010: torch.int16, 0x20000020: torch.int32, 0x20000040: torch.int64,
    8: torch.uint8, 16: torch.uint16, 32: torch.uint32, 64: torch.uint64, 0x80000008: torch.bool,
}  # fmt: skip
TORCH_CODES = {v: k for k, v in MPS_DTYPES.items()}
_BOOL_CLASSES = ("predicate", "logical")


def to_torch(code: int) -> torch.dtype:
    try:
        return MPS_DTYPES[code]
    except KeyError:
        raise ValueError(f"MPSGraph emulation: no torch dtype for MPSDataType {code:#x}") from None


@lru_cache(maxsize=1)
def elementwise() -> dict[str, dict]:
    """selector -> its ``ops`` entry (with the compiled torch functions)."""
    out = {}
    for name, d in raw()["ops"].items():
        entry = dict(d, op=name, fn=torch_fn(str(d["torch"])))
        entry["fn_int"] = torch_fn(str(d["torch_int"])) if d.get("torch_int") else None
        out[d["selector"]] = entry
    return out


# ------------------------------------------------------------------ evaluation


def _dims(axes, rank: int) -> list[int]:
    return sorted({a % rank if rank else 0 for a in (axes if isinstance(axes, list) else [axes])})


def _cast(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """castTensor as the table's rule says: floating to integer saturates (NaN -> 0), to bool tests != 0."""
    if x.dtype == dtype:
        return x
    if dtype == torch.bool:
        return x != 0
    if x.is_floating_point() and not dtype.is_floating_point and not dtype.is_complex:
        info = torch.iinfo(dtype)
        wide = torch.nan_to_num(x.double(), nan=0.0).trunc()
        out = wide.clamp(info.min, info.max).to(dtype)
        return torch.where(wide >= float(info.max), torch.full_like(out, info.max), out)
    return x.to(dtype)


def _elementwise(entry: dict, args: list):
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    first = tensors[0]
    integral = not first.is_floating_point() and not first.is_complex()
    cls = entry["class"]
    fn = entry["fn_int"] if integral and entry["fn_int"] else entry["fn"]
    if entry["op"] == "div" and integral and not tensors[1].is_floating_point():
        return torch.div(tensors[0], tensors[1], rounding_mode="trunc")
    out = fn(*tensors)
    if cls in _BOOL_CLASSES:
        return out.to(torch.bool)
    keep = tensors[1] if cls == "select" else first
    if cls in ("arith", "round", "bitwise", "clamp", "select") or keep.is_floating_point():
        return out.to(torch.promote_types(keep.dtype, tensors[-1].dtype) if cls == "arith" else keep.dtype)
    return out


def _reduce(fn):
    def run(x, axes, *_):
        return fn(x, _dims(axes, x.dim())) if x.dim() else fn(x.reshape(1), [0])

    return run


def _drop_nan(which):
    def run(x, dims):
        if not x.is_floating_point():
            return getattr(torch, which)(x, dims, keepdim=True)
        fill = float("-inf") if which == "amax" else float("inf")
        out = getattr(torch, which)(torch.where(x.isnan(), fill, x), dims, keepdim=True)
        all_nan = x.isnan().all(dim=dims, keepdim=True) if x.numel() else torch.zeros_like(out, dtype=torch.bool)
        return torch.where(all_nan, float("nan"), out).to(x.dtype)

    return run


def _split(x, sizes, axis, *_):
    if isinstance(sizes, int):
        return list(torch.chunk(x, sizes, dim=axis))
    return list(torch.split(x, sizes, dim=axis))


def _squeeze(x, axes=None, *_):
    if axes is None:
        return x.squeeze()
    return x.squeeze(_dims(axes, x.dim()))


def _expand_dims(x, axes, *_):
    for a in sorted(axes if isinstance(axes, list) else [axes]):
        x = x.unsqueeze(a)
    return x


def _concat(*args):
    tensors = args[0] if isinstance(args[0], list) else [args[0], args[1]]
    dim = args[1] if isinstance(args[0], list) else args[2]
    if isinstance(args[0], list) and args[2] is True:  # interleave: element k of each input, in turn
        return torch.stack(tensors, dim=dim + 1 if dim >= 0 else dim).flatten(dim, dim + 1 if dim >= 0 else dim)
    return torch.cat(tensors, dim=dim)


EVALUATORS = {
    "cast": lambda x, dt, *_: _cast(x, to_torch(dt)),
    "identity": lambda x, *_: x,
    "reshape": lambda x, shape, *_: x.reshape(shape),
    "transpose": lambda x, a, b, *_: x.transpose(a, b),
    "permute": lambda x, p, *_: x.permute(p),
    "expand_dims": _expand_dims,
    "squeeze": _squeeze,
    "broadcast": lambda x, shape, *_: x.broadcast_to(shape),
    "flatten2d": lambda x, axis, *_: x.reshape(int(torch.tensor(x.shape[:axis]).prod()), -1),
    "slice": lambda x, dim, start, length, *_: x.narrow(dim, start % x.shape[dim] if start < 0 else start, length),
    "concat": _concat,
    "split": _split,
    "sum": _reduce(lambda x, d: x.sum(d, keepdim=True, dtype=x.dtype)),
    "prod": _reduce(lambda x, d: x.prod(d[0], keepdim=True, dtype=x.dtype) if len(d) == 1 else _prod(x, d)),
    "max_drop_nan": _reduce(_drop_nan("amax")),
    "min_drop_nan": _reduce(_drop_nan("amin")),
    "amax": _reduce(lambda x, d: x.amax(d, keepdim=True)),
    "amin": _reduce(lambda x, d: x.amin(d, keepdim=True)),
    "all": _reduce(lambda x, d: x.bool().all(d, keepdim=True).to(x.dtype)),
    "any": _reduce(lambda x, d: x.bool().any(d, keepdim=True).to(x.dtype)),
    "argmax": lambda x, axis, *_: x.argmax(axis, keepdim=True).to(torch.int32),
    "argmin": lambda x, axis, *_: x.argmin(axis, keepdim=True).to(torch.int32),
    "mean": _reduce(lambda x, d: x.mean(d, keepdim=True)),
    "variance": _reduce(lambda x, d: x.var(d, keepdim=True, correction=0)),
    "softmax": lambda x, axis, *_: torch.softmax(x, axis),
    "matmul": lambda a, b, *_: torch.matmul(a, b),
    "band_part": lambda x, lower, upper, *_: x if x.is_meta else _band_part(x, int(lower), int(upper)),
    "conj": lambda x, *_: x.conj().resolve_conj(),
    "tile": lambda x, reps, *_: x.repeat(reps),
    "reverse": lambda x, axes, *_: x.flip(_dims(axes, x.dim())) if x.dim() else x,
    "shape_of": lambda x, *_: torch.tensor(list(x.shape), dtype=torch.int32, device=x.device),
    "gather_along": lambda axis, x, idx, *_: torch.gather(x, axis, idx.long()),
    "cumsum": lambda x, axis, *_: x.cumsum(axis, dtype=x.dtype),
    "cumprod": lambda x, axis, *_: x.cumprod(axis, dtype=x.dtype),
    "sort": lambda x, axis, descending=False, *_: x.sort(dim=axis, descending=bool(descending), stable=True)[0],
    "argsort": lambda x, axis, descending=False, *_: x.sort(dim=axis, descending=bool(descending), stable=True)[1].to(
        torch.int32
    ),
    "real": lambda x, *_: torch.view_as_real(x)[..., 0] if x.is_complex() else x,
    "imag": lambda x, *_: torch.view_as_real(x)[..., 1] if x.is_complex() else torch.zeros_like(x),
    "complex": lambda re, im, *_: torch.complex(re.float(), im.float()),
}


def _band_part(x: torch.Tensor, lower: int, upper: int) -> torch.Tensor:
    """Keeps the elements of the last two dimensions within ``lower`` below and ``upper`` above the diagonal (a
    negative count keeps that whole side)."""
    rows = torch.arange(x.shape[-2], device=x.device).unsqueeze(1)
    cols = torch.arange(x.shape[-1], device=x.device).unsqueeze(0)
    keep = ((lower < 0) | (rows - cols <= lower)) & ((upper < 0) | (cols - rows <= upper))
    return torch.where(keep, x, torch.zeros((), dtype=x.dtype, device=x.device))


def _prod(x, dims):
    for d in sorted(dims, reverse=True):
        x = x.prod(d, keepdim=True, dtype=x.dtype)
    return x


def _constant(args: list, device: str) -> torch.Tensor:
    value, *rest = args
    shape, dtype = (rest[0], rest[1]) if len(rest) == 2 else ((), rest[0])
    return torch.full(shape, value, dtype=to_torch(dtype), device=device)


# the transcendental selectors ("math" ops) evaluated so far: torch CPU's precision stands for Apple's GPU one
APPROXIMATED: set[str] = set()


def evaluate(node: dict, values: dict[int, object], device: str):
    """One node's value (a tensor, or a list for several outputs), its tensor arguments taken from ``values``."""
    sel = node["sel"]
    if sel == "#output":
        return values[node["args"][0]["t"]][node["args"][1]]
    if sel.startswith("constantWithScalar:"):
        return _constant(node["args"], device)
    args = []
    for a in node["args"]:
        if isinstance(a, dict) and "t" in a:
            args.append(values[a["t"]])
        elif isinstance(a, dict) and "ts" in a:
            args.append([values[i] for i in a["ts"]])
        else:
            args.append(a)
    if sel in elementwise():
        entry = elementwise()[sel]
        if entry["class"] == "math":
            APPROXIMATED.add(entry["op"])
        return _elementwise(entry, args)
    spec = graph_selectors().get(sel)
    if spec is None:
        raise LookupError(f"MPSGraph selector not emulated: -[MPSGraph {sel}] (rules/mpsgraph.yaml has no entry)")
    return EVALUATORS[spec["eval"]](*args)


def _spec_line(t: torch.Tensor, ranked: bool) -> str:
    return " ".join(map(str, [TORCH_CODES[t.dtype], *([t.dim(), *t.shape] if ranked else [-1])]))


def infer(request: dict) -> str:
    node = request["node"]
    if node["sel"] == "#placeholder":
        shape, dtype = node["args"]
        ranked = shape is not None
        return _spec_line(torch.empty(shape or (), dtype=to_torch(dtype), device="meta"), ranked)
    values, ranked = {}, True
    for key, spec in request["inputs"].items():
        ranked &= spec["shape"] is not None
        values[int(key)] = torch.empty(spec["shape"] or (), dtype=to_torch(spec["dtype"]), device="meta")
    out = evaluate(node, values, "meta")
    if isinstance(out, list):
        return "\n".join(_spec_line(t, ranked) for t in out)
    return _spec_line(out, ranked or node["sel"].startswith("constantWithScalar:"))


def _array(data: dict) -> torch.Tensor:
    """The elements a tensor data or NDArray describes, read from (and writable into) the shim's buffer."""
    dtype = to_torch(data["dtype"])
    size = torch.empty((), dtype=dtype).element_size()
    count = max(data["nbytes"], 0) // size
    raw = (ctypes.c_char * (count * size)).from_address(data["ptr"]) if count else bytearray(size)
    base = torch.frombuffer(raw, dtype=dtype, count=count if count else 1)
    steps = data["steps"] or [["dense", data["shape"]]]
    t = base
    for step in steps:
        kind = step[0]
        if kind == "dense":
            n = 1
            for d in step[1]:
                n *= d
            t = base[:n].view(step[1])
        elif kind == "strided":
            t = base.as_strided(step[1], step[2])
        elif kind == "reshape":
            t = t.reshape(step[1])
        elif kind == "transpose":
            t = t.transpose(step[1], step[2])
    return t


def run(request: dict) -> str:
    nodes = request["nodes"]
    values: dict[int, object] = {}
    for feed in request["feeds"]:
        values[feed["node"]] = _array(feed["data"]).clone()
    needed = set()
    todo = [r["node"] for r in request["results"]]
    while todo:
        i = todo.pop()
        if i in needed or i in values:
            continue
        needed.add(i)
        for a in nodes[i]["args"]:
            if isinstance(a, dict):
                todo += [a["t"]] if "t" in a else a.get("ts", [])
    for i in sorted(needed):
        if nodes[i]["sel"] == "#placeholder":
            raise LookupError(f"MPSGraph emulation: placeholder {i} is not fed")
        values[i] = evaluate(nodes[i], values, "cpu")
    for r in request["results"]:
        dest = _array(r["data"])
        value = values[r["node"]]
        value = _cast(value, dest.dtype)
        if value.shape != dest.shape:
            value = value.reshape(dest.shape) if value.numel() == dest.numel() else value.broadcast_to(dest.shape)
        dest.copy_(value)
    return ""


class Evaluator:
    """The callback the shim calls (``mps_shim_set_graph_evaluator``); counts the graphs it ran."""

    def __init__(self):
        self.runs = 0
        self.callback = EVALUATOR(self)

    def __call__(self, request: bytes, out: int, out_len: int) -> int:
        try:
            req = json.loads(request.decode())
            if req["op"] == "run":
                self.runs += 1
                text, rc = run(req), 0
            else:
                text, rc = infer(req), 0
        except Exception as exc:  # noqa: BLE001 - the host code sees a C++ exception naming the cause
            first = (str(exc).strip().splitlines() or [""])[0]
            text, rc = f"{first}" if "MPSGraph" in first else f"MPSGraph emulation: {type(exc).__name__}: {first}", 1
        data = text.encode()[: out_len - 1] + b"\0"
        ctypes.memmove(out, data, len(data))
        return rc


def attach(lib) -> Evaluator:
    ev = Evaluator()
    lib.mps_shim_set_graph_evaluator(ev.callback, shim_table().encode())
    return ev

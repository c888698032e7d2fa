"""verify --large (cuda backend): one case past 2^31 and one past 2^32 elements.

The 32-bit indexing bugs of the Metal guide: a kernel (or host) that indexes with int wraps past
2^31 elements, with uint past 2^32.  Per size, one contiguous case in the family's smallest
registered dtype (the tensors are 2-8 GiB on the GPU), launched as the host would; the output is
poisoned first and SAMPLE positions (both ends, each side of 2^31 and 2^32, random ones) are
compared with the torch-cpu reference run on the sampled inputs (elementwise families only).
A 1-D launch of 2^32 threads or more is a failure without running: Metal's
thread_position_in_grid is a uint, so such a grid cannot be indexed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from migrate.verify.compare import compare
from migrate.verify.dtypes import dtype_name
from migrate.verify.iterator import Operand, build_iter

SIZES = ((1 << 31) + (1 << 20), (1 << 32) + (1 << 20))
SMALLEST = (
    torch.uint8,
    torch.int8,
    torch.bool,
    torch.float16,
    torch.bfloat16,
    torch.int16,
    torch.float32,
    torch.int32,
    torch.int64,
)
EDGE = 256  # positions each side of every boundary
RANDOM = 1 << 16


@dataclass(frozen=True)
class LargeCase:
    n: int
    dtype: torch.dtype

    @property
    def layout(self) -> str:
        hi = self.n.bit_length() - 1
        return f"large_2^{hi}+2^{(self.n - (1 << hi)).bit_length() - 1}"


def large_cases(registered) -> list[LargeCase]:
    dt = next((d for d in SMALLEST if d in set(registered)), None)
    return [LargeCase(n, dt) for n in SIZES] if dt is not None else []


def sample_positions(n: int, seed: int = 0) -> torch.Tensor:
    """Sorted distinct int64 positions: both ends, each side of 2^31 and 2^32 (below n), random ones."""
    parts = [torch.arange(0, min(EDGE, n)), torch.arange(max(0, n - EDGE), n)]
    for b in (1 << 31, 1 << 32):
        if b < n:
            parts.append(torch.arange(max(0, b - EDGE), min(n, b + EDGE)))
    g = torch.Generator().manual_seed(seed)
    parts.append(torch.randint(0, n, (RANDOM,), generator=g))
    return torch.unique(torch.cat(parts))


def make_inputs(case: LargeCase, arity: int, device: str, seed: int) -> list[torch.Tensor]:
    xs = [torch.empty(case.n, dtype=case.dtype, device=device) for _ in range(arity)]
    if device == "meta":
        return xs
    g = torch.Generator(device=device).manual_seed(seed)
    for x in xs:
        if x.dtype.is_floating_point:
            x.uniform_(-4, 4, generator=g)
        else:
            x.random_(0, 2 if x.dtype == torch.bool else 64, generator=g)
    return xs


def plan(runner, case: LargeCase, xs: list[torch.Tensor], out_dtype: torch.dtype):
    """(Launch, output) as the host plans this case (tensors may be on the meta device)."""
    out = torch.empty(case.n, dtype=out_dtype, device=xs[0].device)
    common = out_dtype if out_dtype.is_floating_point and not case.dtype.is_floating_point else case.dtype
    it = build_iter([Operand(x) for x in xs], out, out_dtype, common)
    host = runner._host(runner._flavors()[0])
    return host.plan(runner.source.arity, it, runner.source.name), it.output()


def too_wide(launch) -> str | None:
    wide = [t for t in launch.threads if t >= 1 << 32]
    if wide:
        return (
            f"the host launches {launch.kernel} with {wide[0]} threads in one dimension: Metal's "
            "thread_position_in_grid is a uint, so a grid past 2^32 threads cannot be indexed"
        )
    big = [a for a in launch.args if isinstance(a, torch.Tensor) and a.device.type == "cpu" and a.numel() > 1 << 24]
    if big:
        return (
            f"the host binds a per-element table of {big[0].numel()} entries ({big[0].nbytes >> 30} GiB) "
            "with this launch; not run at this size"
        )
    return None


def run_case(runner, case: LargeCase, seed: int):
    from migrate.device import DeviceError
    from migrate.verify.cell import Cell

    cell = Cell(dtype_name(case.dtype), case.layout)
    fn = getattr(runner.refs[0], "fn", None)
    if fn is None:
        cell.skipped.append("large cases need the torch-cpu reference")
        return cell
    small = make_inputs(LargeCase(4, case.dtype), runner.source.arity, "cpu", seed)
    out_dtype = fn(*small).dtype
    cell.cases = 1
    xs = make_inputs(case, runner.source.arity, "cuda", seed)
    try:
        launch, out = plan(runner, case, xs, out_dtype)
        why = too_wide(launch)
        if why:
            cell.failures.append(why)
            return cell
        cell.kernels.add(launch.kernel)
        torch.empty(0, dtype=torch.uint8, device=out.device).set_(out.untyped_storage()).fill_(0xA5)
        runner.lib.kernel(launch.kernel)(*launch.args, threads=launch.threads)
        torch.cuda.synchronize()
    except (DeviceError, RuntimeError, ValueError) as exc:
        cell.failures.append(f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
        return cell
    pos = sample_positions(case.n, seed)
    ins = [x[pos.to(x.device)].cpu() for x in xs]
    got, exp = out[pos.to(out.device)].cpu(), fn(*ins)
    st = compare(got, exp, lambda i: tuple(x[i].item() for x in ins), runner.opts.atol, runner.opts.rtol)
    if st.first is not None:
        i = st.first.index[0] if st.first.index else 0
        st.first.reason += f" at element {int(pos[i])} of {case.n}, via {launch.kernel}"
    cell.stats.merge(st)
    if st.ok:
        cell.passed = 1
    del xs, out
    torch.cuda.empty_cache()
    return cell


def large_cells(runner, registered, seed: int) -> list:
    return [run_case(runner, c, seed) for c in large_cases(registered)]

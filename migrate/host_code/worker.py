"""The process that runs a tree's host code: ``python -m migrate.host_code.worker`` (the job, JSON, on stdin).

Started by ``migrate.host_code.run`` with the shim's DispatchStub library preloaded (LD_PRELOAD), before the parent
has planned and built: it imports torch meanwhile, then reads the job. It loads the
family's host library first (its MPS hooks must be in place before anything asks whether MPS is available), attaches
the CPU backend as the Metal compiler, loads the cases (``samples.load_cases``), and for each case not done yet
writes RESULT_DIR/started, runs it on fake-MPS tensors, compares with the CPU reference and writes
RESULT_DIR/INDEX.json. A crash here (a host segfault, a kernel fault) ends only this process.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import traceback
from pathlib import Path

RESOLVER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)


class MetalResolver:
    """Builds what the shim's Metal library asks for with the CPU backend (cached like every CPU-backend build)."""

    def __init__(self, root: Path, exports: dict[str, str]):
        from migrate.device.cpu.backend import c10_metal_dirs

        self.root = root
        self.dirs = c10_metal_dirs(root, [])
        self.exports = exports  # host name -> the tree's kernel file exporting it (read by the parent's index)
        self.errors: list[str] = []
        self.built: dict[tuple[str, str], str] = {}

    def _build(self, source: str, filename: str) -> str:
        """The built library's path and kernel names; once per source in this process (every host name a file
        exports resolves to the same library)."""
        from migrate.device.cpu.build import build

        key = (filename, source)
        if key not in self.built:
            built = build(source, self.dirs, filename, opt=1)
            names = [k["name"] for k in sorted(built.meta["kernels"], key=lambda k: k["index"])]
            self.built[key] = "\n".join([str(built.path), *names])
        return self.built[key]

    def __call__(self, kind: bytes, arg: bytes, out: int, out_len: int) -> int:
        try:
            if kind == b"source":
                text = self._build(arg.decode(), "host_source.metal")
            else:
                name = self.exports.get(arg.decode())
                if name is None:
                    raise LookupError(f"no kernel file of the tree exports {arg.decode()!r}")
                path = self.root / name
                text = self._build(path.read_text(encoding="utf-8"), path.name)
            rc = 0
        except Exception as exc:  # the host code sees a failed library (nil + NSError), as on a Mac
            text = " ".join(str(exc).split())[:2000] or type(exc).__name__
            self.errors.append(text)
            rc = 1
        data = text.encode()[: out_len - 1] + b"\0"
        ctypes.memmove(out, data, len(data))
        return rc


def _to(value, device, exact=False):
    """``value`` with its tensors on ``device``: by ``Tensor.to``, as test_mps moves OpInfo samples, or with
    ``exact`` keeping strides and storage offsets (verify's own layouts)."""
    import torch

    if isinstance(value, torch.Tensor):
        if exact and device == "mps":
            from .own_cases import on_mps_exact

            return on_mps_exact(value)
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device, exact) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device, exact) for k, v in value.items()}
    return value


def _args_on_mps(case: dict) -> list:
    keep = set(case.get("cpu_args", ()))  # 0-dim CPU tensors the op takes as scalars
    return [a if k in keep else _to(a, "mps", case.get("exact")) for k, a in enumerate(case["args"])]


def _fallbacks(lib) -> list[str]:
    buf = ctypes.create_string_buffer(1 << 16)
    lib.mps_shim_fallbacks(buf, len(buf))
    return [s for s in buf.value.decode().splitlines() if s]


def _write(path: Path, data) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)


def _run_case(case: dict, op_cache: dict) -> tuple[dict, object, str | None]:
    """(the case's row, the host code's output, the error it raised)."""
    from .samples import callable_of, compare

    row: dict = {"index": case["index"]}
    try:
        op = callable_of(case["call"], op_cache)
        out = _to(op(*_args_on_mps(case), **_to(case["kwargs"], "mps", case.get("exact"))), "cpu")
    except Exception as exc:  # a host-code error (TORCH_CHECK, NSError) is this case's result
        lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
        error = f"{type(exc).__name__}: {lines[0] if lines else ''}"
        if os.environ.get("MPS_MIGRATE_DEBUG"):
            traceback.print_exc()
        if case["reference_error"] is None:
            row["failure"] = f"the host code raised {error}"
        return row, None, error
    if case["reference_error"] is not None:
        row["failure"] = f"CPU raised {case['reference_error']}, the host code did not"
        return row, out, None
    problem, upcast = compare(out, case)
    if problem:
        row["failure"] = problem
    row["upcast"] = upcast
    return row, out, None


def _against_old(row: dict, out, error: str | None, saved: Path) -> None:
    """Compares this case with the old implementation's (``saved``, written by the old tree's run): a difference
    is a behaviour change (``changed``); an old run that could not compute it is ``old_missing``."""
    import torch

    from .samples import _assert_close

    if not saved.exists():
        row["old_missing"] = "the old implementation's run left no result (it crashed or timed out)"
        return
    old = torch.load(saved, weights_only=False)
    row["old_graph"] = old["graph_runs"] > 0
    if old["error"] and "not emulated" in old["error"]:
        row["old_missing"] = old["error"]
    elif old["error"] and error is None:
        row["changed"] = f"the old implementation raised {old['error']}, the new one did not"
    elif error and old["error"] is None:
        row["changed"] = f"the new implementation raised {error}, the old one did not"
    elif error is None:
        problem = _assert_close(out, old["out"])
        if problem:
            row["changed"] = problem


def main() -> int:
    import torch  # imported while the parent plans and builds: the job comes on stdin after

    from . import own_cases, samples  # noqa: F401 - their imports (migrate.verify) too

    torch.testing.assert_close(torch.zeros(1), torch.zeros(1))  # its first call imports torch.distributed.tensor
    job = json.loads(sys.stdin.readline() or "null")
    if job is None:  # the parent gave up (a build error): nothing to run
        return 0
    out_dir = Path(job["result_dir"])
    lib = ctypes.CDLL(job["library"], mode=os.RTLD_LAZY | os.RTLD_GLOBAL)
    resolver = MetalResolver(Path(job["root"]), job["exports"])
    callback = RESOLVER(resolver)
    lib.mps_shim_set_resolver(callback)
    from .graph_eval import APPROXIMATED, attach

    graphs = attach(lib)  # the MPSGraph emulation
    from migrate.verify.dtypes import table

    lib.mps_shim_set_fill_byte(int(table()["sentinel_byte"]))
    from .samples import load_cases

    cases, notes = load_cases(job["selection"], Path(job["cache_dir"]))
    listed = [[c["opinfo"], c["dtype"], c.get("layout", "")] for c in cases]
    _write(out_dir / "cases.json", {"cases": listed, "notes": notes})
    skip = set(job["skip"])
    from migrate.verify.expectations import load as load_expectations

    expectations = load_expectations(Path(job["root"]))  # the tree's xfail/skip tables, read, never imported
    op_cache: dict = {}
    for case in cases:
        if case["index"] in skip:
            continue
        (out_dir / "started").write_text(str(case["index"]))
        runs = graphs.runs
        row, out, error = _run_case(case, op_cache)
        row["graph_runs"] = graphs.runs - runs
        if job.get("save_dir"):  # the old implementation's run: its outputs are the new one's reference
            saved = {"out": out, "error": error, "graph_runs": row["graph_runs"]}
            torch.save(saved, Path(job["save_dir"]) / f"{case['index']}.pt")
        if job.get("old_dir"):
            _against_old(row, out, error, Path(job["old_dir"]) / f"{case['index']}.pt")
        expected = expectations.lookup(case["xfail_key"], case["dtype"]) if case.get("xfail_key") else None
        if expected is not None:
            row["expected"] = expected.json()
        row["approximated"] = sorted(APPROXIMATED)  # so far in this process (the old run's are the old ones')
        row["fallbacks"] = _fallbacks(lib)
        row["metal_errors"] = list(resolver.errors)
        resolver.errors.clear()
        _write(out_dir / f"{case['index']}.json", row)
    return 0


if __name__ == "__main__":
    sys.exit(main())

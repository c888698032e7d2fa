"""The process that runs a tree's host code: ``python -m migrate.host_code.worker JOB.pt RESULT_DIR``.

Started by ``migrate.host_code.run`` with the shim's DispatchStub library preloaded (LD_PRELOAD). It loads torch,
then the family's host library (the shim runtime, the tree's ``OperationUtils.mm`` and the family's host files, the
family's MPS registrations), attaches the CPU backend as the Metal compiler, runs each case on fake-MPS tensors and
saves each case's outputs as CPU tensors (RESULT_DIR/INDEX.pt; RESULT_DIR/started names the case running). A crash here (a host segfault, a kernel fault) ends only this process.
"""

from __future__ import annotations

import ctypes
import os
import sys
import traceback
from pathlib import Path

RESOLVER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)


class MetalResolver:
    """Builds what the shim's Metal library asks for with the CPU backend (cached like every CPU-backend build)."""

    def __init__(self, root: Path, kernel_files: list[Path]):
        from migrate.device.cpu.backend import c10_metal_dirs

        self.root = root
        self.dirs = c10_metal_dirs(root, [])
        self.kernel_files = kernel_files
        self.exports: dict[str, Path] | None = None
        self.errors: list[str] = []

    def _build(self, source: str, filename: str) -> str:
        from migrate.device.cpu.build import build

        built = build(source, self.dirs, filename, opt=1)
        names = [k["name"] for k in sorted(built.meta["kernels"], key=lambda k: k["index"])]
        return "\n".join([str(built.so_path), *names])

    def _exporting(self, name: str) -> Path | None:
        if self.exports is None:
            from migrate.read.metal_reader import read_metal_file

            self.exports = {}
            for path in self.kernel_files:
                metal = read_metal_file(path, path.name, self.dirs)
                for export in metal.exports:
                    self.exports.setdefault(export, path)
        return self.exports.get(name)

    def __call__(self, kind: bytes, arg: bytes, out: int, out_len: int) -> int:
        try:
            if kind == b"source":
                text = self._build(arg.decode(), "host_source.metal")
            else:
                path = self._exporting(arg.decode())
                if path is None:
                    raise LookupError(f"no kernel file of the tree exports {arg.decode()!r}")
                text = self._build(path.read_text(encoding="utf-8"), path.name)
            rc = 0
        except Exception as exc:  # the host code sees a failed library (nil + NSError), as on a Mac
            text = " ".join(str(exc).split())[:2000] or type(exc).__name__
            self.errors.append(text)
            rc = 1
        data = text.encode()[: out_len - 1] + b"\0"
        ctypes.memmove(out, data, len(data))
        return rc


def _to(value, device):
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to(v, device) for k, v in value.items()}
    return value


def _fallbacks(lib) -> list[str]:
    buf = ctypes.create_string_buffer(1 << 16)
    lib.mps_shim_fallbacks(buf, len(buf))
    return [s for s in buf.value.decode().splitlines() if s]


def _callable(case, cache: dict):
    import torch

    kind, *rest = case["call"]
    if kind == "pickled":
        import pickle

        return pickle.loads(rest[0])
    if kind == "aten":
        op = torch.ops.aten
        for part in rest[0].split("."):
            op = getattr(op, part)
        return op
    if "op_db" not in cache:
        from torch.testing._internal.common_methods_invocations import op_db

        cache["op_db"] = {(o.name, o.variant_test_name): o for o in op_db}
    return cache["op_db"][tuple(rest[-2:])]


def main(job_path: str, result_dir: str) -> int:
    import torch

    job = torch.load(job_path, weights_only=False)
    out_dir = Path(result_dir)
    lib = ctypes.CDLL(job["library"], mode=os.RTLD_LAZY | os.RTLD_GLOBAL)
    resolver = MetalResolver(Path(job["root"]), [Path(p) for p in job["kernel_files"]])
    callback = RESOLVER(resolver)
    lib.mps_shim_set_resolver(callback)
    cache: dict = {}
    for case in job["cases"]:
        (out_dir / "started").write_text(str(case["index"]))
        row = {"index": case["index"]}
        try:
            op = _callable(case, cache)
            args = _to(case["args"], "mps")
            kwargs = _to(case["kwargs"], "mps")
            out = op(*args, **kwargs)
            row["output"] = _to(out, "cpu")
        except Exception as exc:  # a host-code error (TORCH_CHECK, NSError) is this case's result
            lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
            row["error"] = f"{type(exc).__name__}: {lines[0] if lines else ''}"
            if os.environ.get("MPS_MIGRATE_DEBUG"):
                traceback.print_exc()
        row["fallbacks"] = _fallbacks(lib)
        row["metal_errors"] = list(resolver.errors)
        resolver.errors.clear()
        torch.save(row, out_dir / f"{case['index']}.pt")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

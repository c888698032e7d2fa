"""``mps-migrate compile --host``: every host file of a tree (``OperationUtils.mm``, ``operations/*.mm``), or the
given files, checked as Objective-C++ against the shim SDK; one row per file."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .units import MPS_DIR, TreeUnits


def host_files(root: Path) -> list[Path]:
    mps = root / MPS_DIR
    return [p for p in [mps / "OperationUtils.mm", *sorted((mps / "operations").glob("*.mm"))] if p.is_file()]


def compile_files(root: Path, files: list[Path], jobs: int, progress=None) -> list[dict]:
    units = TreeUnits(root, progress)

    def one(path: Path) -> dict:
        t0 = time.perf_counter()
        result = units.check(path)
        error = None if result.ok else result.first_error()
        return {
            "file": str(path), "ok": result.ok, "error": error, "errors": len(result.errors),
            "seconds": round(time.perf_counter() - t0, 2),
        }  # fmt: skip

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        return list(pool.map(one, files))

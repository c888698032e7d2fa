"""mps-migrate compile: build every Metal kernel file of a tree (or the given files) and report per file."""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from migrate.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError

HELP = "compile Metal kernel files (a tree's aten/src/ATen/native/mps/kernels/*.metal, or FILES) on a backend"
KERNELS = Path("aten/src/ATen/native/mps/kernels")


def add_arguments(p) -> None:
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="TREE|FILES",
        help="a PyTorch tree (default: the current directory's) or .metal files",
    )
    p.add_argument(
        "--backend",
        choices=("cpu", "cuda"),
        default="cuda",
        help="cuda: PTX for sm_90, checked with ptxas where present (default); cpu: a shared library",
    )
    p.add_argument("--root", type=Path, help="tree whose c10/metal and aten/src headers FILES include")
    p.add_argument(
        "--host",
        action="store_true",
        help="compile the tree's Objective-C++ host files (OperationUtils.mm, operations/*.mm) or the .mm FILES "
        "against the shim SDK (needs clang-19, GNU libobjc, the Blocks runtime and GNUstep's Foundation from apt)",
    )
    p.add_argument("--jobs", "-j", type=int, default=max(1, min(8, os.cpu_count() or 1)), help="parallel builds")
    p.add_argument("--format", choices=("text", "json"), default="text")


def _targets(args) -> tuple[Path | None, list[Path]]:
    from migrate.tree import find_root

    paths = args.paths or [Path(".")]
    files = [p for p in paths if p.is_file()]
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or directory: {missing[0]}")
    dirs = [p for p in paths if p.is_dir()]
    if dirs and files or len(dirs) > 1:
        raise UsageError("give one tree, or .metal files")
    if dirs:
        root = find_root(dirs[0])
        found = sorted((root / KERNELS).glob("*.metal"))
        if not found:
            raise UsageError(f"no .metal files under {root / KERNELS}")
        return root, found
    if args.root:
        return find_root(args.root), files
    return _enclosing_tree(files), files


def _enclosing_tree(files: list[Path]) -> Path | None:
    """The PyTorch tree holding the files (its c10/metal and aten/src headers are theirs), if one does."""
    from migrate.tree import find_root

    roots = set()
    for f in files:
        try:
            roots.add(find_root(f))
        except UsageError:
            roots.add(None)
    return roots.pop() if len(roots) == 1 else None


def _compile(be, path: Path) -> dict:
    from migrate.device import DeviceError

    t0 = time.perf_counter()
    row = {"file": str(path), "ok": True, "kernels": 0, "error": None}
    try:
        lib = be.compile_shader(path.read_text(encoding="utf-8"), [path.parent], filename=path.name)
        row["kernels"] = len(lib.kernel_names)
    except DeviceError as exc:
        row["ok"] = False
        row["error"] = _first_error(exc, path)
    except (OSError, UnicodeDecodeError) as exc:
        row["ok"] = False
        row["error"] = f"{path}: cannot read: {exc}"
    row["seconds"] = round(time.perf_counter() - t0, 2)
    return row


def _first_error(exc, path: Path) -> str:
    diags = getattr(exc, "diagnostics", ())
    if diags:
        d = diags[0]
        where = str(path.parent / d.file) if d.file == path.name else d.file
        return f"{where}:{d.line}:{d.column}: {d.message}"
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    detail = next((ln for ln in lines[1:] if "error" in ln), lines[-1] if lines else "compile error")
    return f"{path}: {detail}"


def _run_host(args) -> int:
    from migrate.host_code.compile_tree import compile_files, host_files
    from migrate.host_code.toolchain import ToolchainMissing
    from migrate.tree import find_root

    paths = args.paths or [Path(".")]
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"no such file or directory: {missing[0]}")
    dirs = [p for p in paths if p.is_dir()]
    if dirs and len(paths) > 1:
        raise UsageError("give one tree, or .mm files")
    root = find_root(args.root or paths[0])
    files = host_files(root) if dirs else [p.resolve() for p in paths]
    if not files:
        raise UsageError(f"no host files under {root}")
    try:
        rows = compile_files(root, files, args.jobs, lambda m: print(m, file=sys.stderr, flush=True))
    except ToolchainMissing as exc:
        raise UsageError(str(exc)) from None
    failed = [r for r in rows if not r["ok"]]
    if args.format == "json":
        json.dump([{k: r[k] for k in ("file", "ok", "error")} for r in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for r in rows:
            print(f"{'OK  ' if r['ok'] else 'FAIL'}  {r['file']}" + (f"\n      {r['error']}" if r["error"] else ""))
        print(f"{len(rows) - len(failed)} of {len(rows)} host files compile (Objective-C++, shim SDK)", file=sys.stderr)
    return EXIT_FINDINGS if failed else EXIT_OK


def run(args) -> int:
    from migrate.device import get_backend

    if args.host:
        return _run_host(args)
    root, files = _targets(args)
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.backend == "cuda":
        be = get_backend("cuda", root=root, assemble=True)
    else:
        be = get_backend("cpu", root=root, opt=0, isolate=False)
    with ThreadPoolExecutor(args.jobs) as pool:  # each build is compiler subprocesses
        rows = list(pool.map(lambda f: _compile(be, f), files))
    failed = [r for r in rows if not r["ok"]]
    if args.format == "json":
        json.dump({"backend": args.backend, "files": rows, "failed": len(failed)}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for r in rows:
            status = f"OK    {r['kernels']:4d} kernels" if r["ok"] else "FAIL"
            print(f"{status}  {r['file']}" + (f"\n      {r['error']}" if r["error"] else ""))
        print(f"{len(rows) - len(failed)} of {len(rows)} files compile ({args.backend} backend)", file=sys.stderr)
    return EXIT_FINDINGS if failed else EXIT_OK


__all__ = ["EXIT_ERROR"]

"""mps-migrate verify: run a family's Metal kernel as the host would and compare it with references."""

from __future__ import annotations

import sys
from pathlib import Path

from migrate.errors import UsageError
from migrate.tree import find_root

HELP = "run an op family's Metal kernel (CPU backend) on many dtypes/layouts and compare with torch CPU"


def add_arguments(p) -> None:
    p.add_argument("family", help="operator family, e.g. atan2")
    p.add_argument("--root", type=Path, default=Path("."), help="any path inside the PyTorch tree")
    p.add_argument("--patch", metavar="FILE|-", help="unified diff applied in memory first (- reads stdin)")
    p.add_argument("--backend", choices=("cpu", "mps", "cuda", "auto"), default="cpu")
    p.add_argument(
        "--racecheck",
        action="store_true",
        help="cuda: run again under compute-sanitizer racecheck and memcheck; hazards fail",
    )
    p.add_argument(
        "--large",
        action="store_true",
        help="cuda: also a case past 2^31 and one past 2^32 elements (32-bit indexing; GBs of GPU memory)",
    )
    p.add_argument("--dtypes", help="comma-separated torch dtype names (default: every registered input dtype)")
    p.add_argument("--layouts", help="comma-separated layouts (default: all; see rules/verify.yaml)")
    p.add_argument("--atol", type=float, help="absolute tolerance (default: torch.testing's per dtype)")
    p.add_argument("--rtol", type=float, help="relative tolerance (default: torch.testing's per dtype)")
    p.add_argument("--seed", type=int, help="input seed (default: rules/verify.yaml)")
    p.add_argument("--opt", type=int, choices=(0, 1, 2, 3), default=0, help="CPU backend optimisation level")
    p.add_argument("--checked", action="store_true", help="guard-page every buffer: out-of-bounds accesses fail")
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=30.0,
        metavar="SECONDS",
        help="wall-clock limit per kernel launch; a kernel past it fails (default: 30)",
    )
    p.add_argument(
        "--compile-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="limit per compiler stage; a shader past it is a compile error (default: 600)",
    )
    p.add_argument(
        "--no-opinfo",
        action="store_true",
        help="skip the installed torch's OpInfo samples (layout 'opinfo'; importing op_db takes seconds)",
    )
    p.add_argument(
        "--host",
        action="store_true",
        help="run the family's overloads through the tree's own .mm host code (compiled as Objective-C++ against "
        "the shim SDK) on fake-MPS tensors, with the OpInfo samples, against torch CPU",
    )
    p.add_argument(
        "--old",
        metavar="REV|PATH",
        help="with --host: compare with the old implementation from a git revision of the tree or another tree "
        "(default: HEAD when the tree's MPS host files have uncommitted changes; none: no old reference)",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")


def _seconds(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _progress():
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        print(f"\rverify: {done}/{total} cases", end=end, file=sys.stderr, flush=True)

    return show


def _read_patch(arg: str) -> tuple[str, str]:
    if arg == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(arg).read_text(encoding="utf-8"), arg
    except OSError as exc:
        raise UsageError(f"cannot read patch: {exc.strerror or exc}", arg) from None


def _run_host(args, root: Path) -> int:
    import dataclasses
    import json

    from migrate.host_code.run import NotRunnable, render, verify_host
    from migrate.host_code.toolchain import ToolchainMissing
    from migrate.index import Index
    from migrate.tree import load_tree

    if args.patch or args.backend != "cpu":
        raise UsageError("--host runs the tree as it is on the CPU backend (no --patch, no --backend)")
    from migrate.host_code.old_tree import default_old, old_root

    spec = args.old if args.old is not None else default_old(root)  # after port --write: the pre-port text
    old = None
    if spec and spec != "none":
        old_path, label = old_root(root, spec)
        old = (old_path, lambda: Index(load_tree(old_path)), label)
    try:
        report = verify_host(
            root, lambda: Index(load_tree(root)), args.family, timeout=max(args.timeout, 120.0), progress=_progress(),
            old=old,
        )  # fmt: skip
    except ToolchainMissing as exc:
        raise UsageError(str(exc)) from None
    except NotRunnable as exc:
        print(f"mps-migrate: verify could not run: {exc}", file=sys.stderr)
        return 2
    if args.format == "json":
        data = {"path": "host", **dataclasses.asdict(report)}  # the tree's host code ran (not an emulation)
        data["fallbacks"] = sorted(report.fallbacks)
        data["verdict"] = report.verdict
        data["references"], data["old_vs_cpu"] = report.references, report.old_vs_cpu
        data["behaviour_changes"] = report.behaviour_changes
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        sys.stdout.write(render(report) + "\n")
    return {"PASS": 0, "FAIL": 1}.get(report.verdict, 2)


def run(args) -> int:
    root = find_root(args.root, (args.command, args.family))
    if args.old and not args.host:
        raise UsageError("--old compares through the host path: add --host")
    if args.host:  # this process never imports torch: the worker does
        return _run_host(args, root)
    from migrate.verify.dtypes import from_name
    from migrate.conventions.launch import HandWritten
    from migrate.verify.report import to_json, to_text
    from migrate.verify.run import CannotRun, Options, verify

    try:
        dtypes = [from_name(n) for n in args.dtypes.split(",") if n.strip()] if args.dtypes else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    layouts = [x.strip() for x in args.layouts.split(",") if x.strip()] if args.layouts else None
    opts = Options(
        backend=args.backend,
        dtypes=dtypes,
        layouts=layouts,
        atol=args.atol,
        rtol=args.rtol,
        seed=args.seed,
        opt=args.opt,
        checked=args.checked,
        timeout=args.timeout,
        compile_timeout=args.compile_timeout,
        progress=_progress(),
        opinfo=not args.no_opinfo,
        large=args.large,
    )
    if args.large and args.backend != "cuda":
        raise UsageError("--large needs --backend cuda (tensors of 2^31 and 2^32 elements, on the GPU)")
    if args.racecheck:
        from migrate.device.cuda.sanitizer import verify_under_sanitizers

        return verify_under_sanitizers(args)
    patch = _read_patch(args.patch) if args.patch else None
    try:
        report = verify(root, args.family, patch, opts)
    except (CannotRun, HandWritten) as exc:
        print(f"mps-migrate: verify could not run: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(to_json(report) + "\n" if args.format == "json" else to_text(report))
    return report.exit_code

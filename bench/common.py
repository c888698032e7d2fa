"""Helpers shared by the bench scripts (run them as ``python bench/<script>.py``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def best(fn, runs: int = 5) -> float:
    """Best wall time of ``runs`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def cold_ms(what: str, root: Path, jobs: str | None = None) -> float:
    """Milliseconds of one cold run of ``what`` (torchgen | lint) in a new process (bench/cold_process.py);
    ``jobs``: MPS_MIGRATE_JOBS for the lint (None: unset, the CLI's automatic choice)."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "MPS_MIGRATE_JOBS"}
    if jobs:
        env["MPS_MIGRATE_JOBS"] = jobs
    script = Path(__file__).with_name("cold_process.py")
    out = subprocess.run(
        [sys.executable, str(script), what, str(root)], env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.split()[-1])


def whole_ms(what: str, root: Path, pycache: Path, jobs: str | None = None) -> float:
    """Milliseconds of one whole process, from its start to its exit, as a user waits for it: ``torchgen``
    (import torchgen, parse the tree's yaml) or ``lint`` (``mps-migrate lint ROOT``, no cache, its report to
    /dev/null).  Both compile their modules once into ``pycache`` (``-X pycache_prefix``), as an installed
    package has its .pyc files: the first round of a run pays that compilation."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("MPS_MIGRATE_JOBS", "PYTHONDONTWRITEBYTECODE")}
    if jobs:
        env["MPS_MIGRATE_JOBS"] = jobs
    env["MPS_MIGRATE_NO_CACHE"] = "1"
    if what == "torchgen":
        native = root / "aten/src/ATen/native"
        code = (
            f"import sys; sys.path.insert(0, {str(root)!r}) if {(root / 'torchgen/gen.py').is_file()!r} else None\n"
            "import torchgen.gen as tg\n"
            f"tg.parse_native_yaml({str(native / 'native_functions.yaml')!r}, {str(native / 'tags.yaml')!r})"
        )
        cmd = [sys.executable, "-X", f"pycache_prefix={pycache}", "-c", code]
    else:
        cmd = [sys.executable, "-X", f"pycache_prefix={pycache}", "-m", "migrate", "lint", str(root)]
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ms = (time.perf_counter() - t) * 1000
    if out.returncode not in (0, 1):
        sys.exit(f"{what} failed: {out.stderr.strip()}")
    return ms


def pytorch_tree(arg: str | None = None, version: str = "2.6.0") -> Path:
    """ARG, else the PyTorch tree from ../shared/corpus/fetch-pytorch-tree or fixtures/trees (exit if neither)."""
    if arg:
        return Path(arg)
    from tests.corpus import _fetch

    root, reason = _fetch(version)
    if root is None:
        sys.exit(f"cannot get the PyTorch {version} tree: {reason}")
    return root

"""Time the incremental lint a pre-commit hook runs: `mps-migrate lint <one changed .mm>`.

    python bench/bench_incremental.py [ROOT] [FILE]   (default: the PyTorch 2.6.0 tree, operations/UnaryOps.mm)

End to end as a subprocess (cold: empty model cache; warm: cache filled by a previous run),
and in-process (warm cache, interpreter and imports already paid), with the in-process time
split into load_tree and lint_tree. Target: warm subprocess under 0.3 s. Best of N.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from common import best, pytorch_tree  # noqa: E402
N = 5


def main() -> None:
    root = pytorch_tree(sys.argv[1] if len(sys.argv) > 1 else None)
    rel = sys.argv[2] if len(sys.argv) > 2 else "aten/src/ATen/native/mps/operations/UnaryOps.mm"
    target = root / rel
    cmd = [sys.executable, "-m", "migrate", "lint", str(target), "--format", "concise", "--exit-zero"]

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, MPS_MIGRATE_CACHE=cache)

        def cold():
            subprocess.run(["rm", "-rf", cache + "/models"], check=True)
            subprocess.run(cmd, env=env, check=True, capture_output=True)

        def warm():
            subprocess.run(cmd, env=env, check=True, capture_output=True)

        t_cold = best(cold, 3)
        warm()
        t_warm = best(warm)
        t_python = best(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
        t_imports = best(lambda: subprocess.run(
            [sys.executable, "-c", "import migrate.cli, migrate.commands.lint_cmd, migrate.lint, migrate.read.yaml_reader"],
            env=env, check=True))  # what a warm run imports (readers of cached files are not)

        os.environ["MPS_MIGRATE_CACHE"] = cache
        from migrate.lint import lint_tree
        from migrate.tree import load_tree

        tree = load_tree(root)
        t_load = best(lambda: load_tree(root))
        t_lint = best(lambda: lint_tree(tree, None, [rel]))
        t_inproc = best(lambda: lint_tree(load_tree(root), None, [rel]))
        findings = lint_tree(tree, None, [rel]).findings

    print(f"tree: {root}\nfile: {rel} ({len(findings)} findings)\n")
    print(f"subprocess, cold cache   {t_cold:6.3f} s")
    print(f"subprocess, warm cache   {t_warm:6.3f} s   (target < 0.300)")
    print(f"  of which: python -c pass {t_python:6.3f} s, imports {t_imports:6.3f} s (incl. python)")
    print(f"in-process, warm cache   {t_inproc:6.3f} s   = load_tree {t_load:.3f} + lint_tree {t_lint:.3f}")


if __name__ == "__main__":
    main()

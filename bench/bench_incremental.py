"""Time the incremental lint a pre-commit hook runs: `mps-migrate lint <one changed file>`, whole process.

    python bench/bench_incremental.py [--ref REV] [ROOT] [FILE]
    (default: the PyTorch 2.6.0 tree, operations/BinaryKernel.mm, a file with findings)

Runs on a scratch git copy of the tree (HEAD = the tree as shipped), each case as a new process:

- cold:        empty cache
- warm:        the same command again (what pre-commit runs on an unchanged tree)
- since=HEAD:  `lint --since=HEAD FILE` with FILE edited after HEAD (the hook's own command), warm
- edited:      FILE edited since the last run (parse cache warm for every other file)

With ``--ref REV`` the same cases run with the code of REV (``git archive``) in the same run,
as the reference. Bytecode is compiled first, as an installed package has it. Target (issue 11):
warm and since=HEAD <= 0.15 s. Best of N.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from common import best, pytorch_tree  # noqa: E402

N = 7


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def scratch_repo(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    git(dst, "init", "-q")
    git(dst, "add", "-A")
    git(dst, "-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "tree")
    return dst


def code_at(rev: str, dst: Path) -> Path:
    """The package at git revision ``rev``, unpacked (importable through PYTHONPATH)."""
    dst.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "migrate", "rules"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dst)], input=archive, check=True)
    return dst


def cases(code: Path, root: Path, rel: str, cache: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(MPS_MIGRATE_CACHE=cache, PYTHONPATH=str(code))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(code / "migrate")], env=env, check=True)
    target = root / rel
    lint = [sys.executable, "-m", "migrate", "lint", str(target), "--format", "concise", "--exit-zero"]
    run = lambda cmd: subprocess.run(cmd, env=env, check=True, capture_output=True, cwd=root)  # noqa: E731
    original = target.read_bytes()

    def cold():
        shutil.rmtree(cache, ignore_errors=True)
        run(lint)

    out = {"cold": best(cold, 3)}
    run(lint)
    out["warm"] = best(lambda: run(lint), N)
    target.write_bytes(original + b"\n// edited after HEAD\n")
    run(lint + ["--since=HEAD"])
    out["since=HEAD"] = best(lambda: run(lint + ["--since=HEAD"]), N)
    edits = iter(range(10**6))

    def edited():
        target.write_bytes(original + f"\n// edit {next(edits)}\n".encode())
        run(lint)

    out["edited"] = best(edited, N)
    target.write_bytes(original)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", help="also time the code of this git revision, as the reference")
    ap.add_argument("root", nargs="?")
    ap.add_argument("file", nargs="?", default="aten/src/ATen/native/mps/operations/BinaryKernel.mm")
    args = ap.parse_args()
    src = pytorch_tree(args.root)
    with tempfile.TemporaryDirectory() as tmp:
        root = scratch_repo(src, Path(tmp) / "tree")
        t_python = best(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
        rows = {"this tree": cases(REPO, root, args.file, tmp + "/cache")}
        if args.ref:
            rows[args.ref] = cases(code_at(args.ref, Path(tmp) / "ref"), root, args.file, tmp + "/cache-ref")
    print(f"tree: {src}\nfile: {args.file}   (python -c pass: {t_python:.3f} s; best of {N})\n")
    names = list(next(iter(rows.values())))
    print(f"{'code':<12}" + "".join(f"{n:>12}" for n in names))
    for who, r in rows.items():
        print(f"{who:<12}" + "".join(f"{r[n]:>11.3f}s" for n in names))
    print("\ntarget (issue 11): warm and since=HEAD <= 0.150 s")


if __name__ == "__main__":
    main()

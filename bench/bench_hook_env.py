"""Time creating the pre-commit hook's environment (what a new user waits for once), with the real pre-commit.

    python bench/bench_hook_env.py [REV [REFERENCE_REV]]
    (default: HEAD, against the commit before the light install: the one before tests/test_install.py)

For each revision: a scratch git repository whose .pre-commit-config.yaml points at this repository
(`repo: <path>`, `rev: REV`), a fresh PRE_COMMIT_HOME, `pre-commit install-hooks` timed, then the size
of the environment's lib/. pip fetches from its configured indexes, as for a user. Target (issue 14):
HEAD under 10 s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout.strip()


def size_mb(folder: Path) -> float:
    return sum(os.lstat(os.path.join(d, f)).st_size for d, _, files in os.walk(folder) for f in files) / 2**20


def hook_env(rev: str, pre_commit: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        repo, home = Path(tmp) / "repo", Path(tmp) / "home"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (repo / ".pre-commit-config.yaml").write_text(
            f"repos:\n  - repo: {REPO}\n    rev: {rev}\n    hooks:\n      - id: mps-migrate\n"
        )
        t = time.perf_counter()
        subprocess.run(
            [pre_commit, "install-hooks"],
            cwd=repo,
            env={**os.environ, "PRE_COMMIT_HOME": str(home)},
            check=True,
            capture_output=True,
        )
        seconds = time.perf_counter() - t
        (env,) = home.glob("repo*/py_env-*")
        return seconds, size_mb(env / "lib")


def main() -> None:
    pre_commit = shutil.which("pre-commit", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    if pre_commit is None:
        sys.exit("pre-commit is not installed (pip install pre-commit)")
    first = git("log", "--diff-filter=A", "--format=%H", "--", "tests/test_install.py").splitlines()[-1]
    revs = [git("rev-parse", a) for a in (sys.argv[1:3] or ["HEAD"])]
    if len(revs) == 1:
        revs.append(git("rev-parse", f"{first}^"))
    for label, rev in zip(("measured", "reference"), revs):
        seconds, mb = hook_env(rev, pre_commit)
        print(f"{label:9} {rev[:10]}  pre-commit install-hooks {seconds:5.1f} s   lib/ {mb:6.1f} MB")


if __name__ == "__main__":
    main()

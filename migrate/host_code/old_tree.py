"""``verify FAMILY --host --old REV|PATH``: the tree holding the old implementation. A folder is another tree; a
git revision of the tree's repository becomes a tree of links to the working tree in which every file that differs
from the revision (changed, added or deleted since) is the revision's (cached by revision and file list)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from migrate.errors import UsageError

from .units import cache_root


def _git(top: Path, *args: str, binary: bool = False):
    proc = subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=not binary)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace") if binary else proc.stderr
        raise UsageError(f"--old: git {' '.join(args)}: {(err.strip().splitlines() or ['failed'])[-1]}")
    return proc.stdout


def old_root(root: Path, spec: str) -> tuple[Path, str]:
    """(the old tree, how reports name it)."""
    path = Path(spec).expanduser()
    if path.is_dir():
        return path.resolve(), str(path)
    root = root.resolve()
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip())
    commit = _git(top, "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}").strip()
    changed = _git(top, "diff", "--name-only", "--no-renames", commit, "--", ".").splitlines()
    changed += _git(top, "ls-files", "--others", "--exclude-standard").splitlines()
    under = root.relative_to(top)
    rels = sorted({Path(c).relative_to(under).as_posix() for c in changed if (top / c).is_relative_to(root)})
    key = hashlib.sha256("\n".join([str(root), commit, *rels]).encode()).hexdigest()[:20]
    dest = cache_root() / "old-trees" / key
    if not (dest / ".complete").exists():
        if dest.exists():
            shutil.rmtree(dest)
        tracked = set(_git(top, "ls-tree", "-r", "--name-only", commit, "--", str(under) or ".").splitlines())
        files = {}
        for rel in rels:
            name = (under / rel).as_posix()
            files[rel] = _git(top, "show", f"{commit}:{name}", binary=True) if name in tracked else None
        overlay(root, dest, files)
        (dest / ".complete").write_text(commit)
    return dest, f"{spec} ({commit[:12]})"


def overlay(root: Path, dest: Path, files: dict[str, bytes | None]) -> None:
    """``dest``: links to ``root``'s entries, except ``files`` (bytes: that content; None: absent)."""
    dest.mkdir(parents=True)
    for entry in root.iterdir():
        (dest / entry.name).symlink_to(entry)
    for rel, data in files.items():
        parts = Path(rel).parts
        here, src = dest, root
        for part in parts[:-1]:
            here, src = here / part, src / part
            if here.is_symlink():
                here.unlink()
                here.mkdir()
                for child in src.iterdir():
                    (here / child.name).symlink_to(child)
            elif not here.exists():
                here.mkdir()
        target = here / parts[-1]
        if target.is_symlink() or target.exists():
            target.unlink()
        if data is not None:
            target.write_bytes(data)


def default_old(root: Path) -> str | None:
    """ "HEAD" when ``root`` is a git work tree whose MPS host folder has uncommitted changes (``port --write`` then
    ``verify``: the old implementation is the pre-port text), else None."""
    proc = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--", "aten/src/ATen/native/mps"],
        capture_output=True, text=True,
    )  # fmt: skip
    return "HEAD" if proc.returncode == 0 and proc.stdout.strip() else None

"""Cache of whole lint results: the findings of ``lint_tree(tree, config, only)`` for one state of the tree.

A pre-commit hook lints one file of an unchanged tree again and again; reading every cached
model and running every rule for it costs more than the process start.  The result is kept
under a digest of everything that decides it: the code of the whole package and its rule
tables, Python and package versions (cache.py's key), the config, the paths asked for, and
the bytes of every file lint can read (``inputs``).  Finding those bytes unchanged goes by
``os.stat`` first (mtime, ctime, size, inode: a stat alias), and by reading and hashing them
when any of that changed (a ``touch`` or a checkout of the same bytes still hits).  A stat alias
is only written when every input is older than the alias by a clear margin, so a file
rewritten within the same clock tick is never taken as unchanged (git's "racily clean").
"""

from __future__ import annotations

import hashlib
import os
import time
from functools import lru_cache
from pathlib import Path

from migrate import cache
from migrate.tree import C10_METAL_REL, COMMON_MPS_REL, HOST_SUFFIXES, MPS_REL, NATIVE_REL, YAML_REL

RACY_S = 2.0  # an input changed this recently is hashed, never trusted by its stat


def inputs(root: Path) -> list[Path]:
    """Every file a lint of ``root`` can read (a superset: more only costs a stat each)."""
    from migrate.tables import load_table
    from migrate.tree import metal_include_dirs

    files = [root / YAML_REL, root / COMMON_MPS_REL, root / ".mps-migrate.toml", root / "pyproject.toml"]
    files += _walk(root / MPS_REL, HOST_SUFFIXES + (".metal",))
    files += _walk(root / NATIVE_REL, (".h", ".cpp"))
    for d in metal_include_dirs(root):
        files += _walk(d / C10_METAL_REL, (".h",))
    for pattern in load_table("opinfo.yaml")["files"]:
        files += sorted(root.glob(pattern))
    return files


def _walk(base: Path, suffixes: tuple[str, ...]) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        out += [Path(dirpath, n) for n in sorted(filenames) if n.endswith(suffixes)]
    return out


@lru_cache(maxsize=1)
def _code_digest() -> bytes:
    """cache.py's key (Python, packages, reader code, tables) plus the code of every other module."""
    pkg = Path(__file__).resolve().parent
    h = hashlib.blake2b(cache._code_digest(), digest_size=16)
    for f in sorted(pkg.rglob("*.py")):
        h.update(b"\0" + f.relative_to(pkg).as_posix().encode() + b"\0" + f.read_bytes())
    return h.digest()


def _head(root: Path, config, only, overlay: dict[str, bytes]) -> hashlib.blake2b:
    from migrate import codec

    h = hashlib.blake2b(_code_digest() + codec.VERSION, digest_size=20)
    h.update(repr((str(root), repr(config), only)).encode())
    for rel in sorted(overlay):
        h.update(b"\0overlay\0" + rel.encode() + b"\0" + hashlib.blake2b(overlay[rel]).digest())
    return h


def _stat_key(head, files: list[Path]) -> tuple[str, float]:
    """(digest of the inputs' stats, newest ctime/mtime among them)."""
    h, newest = head.copy(), 0.0
    for f in files:
        try:
            s = os.stat(f)
        except OSError:
            h.update(b"\0-" + str(f).encode())
            continue
        h.update(f"\0{f}\0{s.st_mtime_ns}\0{s.st_ctime_ns}\0{s.st_size}\0{s.st_ino}".encode())
        newest = max(newest, s.st_mtime, s.st_ctime)
    return "s" + h.hexdigest(), newest


def _content_key(head, files: list[Path]) -> str:
    h = head.copy()
    for f in files:
        try:
            data = f.read_bytes()
        except OSError:
            h.update(b"\0-" + str(f).encode())
            continue
        h.update(b"\0" + str(f).encode() + b"\0" + hashlib.blake2b(data).digest())
    return "c" + h.hexdigest()


def _read(name: str) -> bytes | None:
    try:
        with open(_dir() / name, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _dir() -> Path:
    return cache.cache_base() / "results"


def _write(name: str, blob: bytes) -> None:
    cache._write(_dir() / name, blob)  # atomic; an unwritable cache only costs speed


class Sources(dict):
    """Path -> bytes, read from the tree (or the overlay) when first asked for: what rendering
    and fingerprints need of a cached result."""

    def __init__(self, root: Path, overlay: dict[str, bytes]):
        super().__init__(overlay)
        self.root = root

    def __missing__(self, rel: str) -> bytes:
        try:
            data = (self.root / rel).read_bytes()
        except OSError:
            raise KeyError(rel) from None
        self[rel] = data
        return data

    def get(self, rel, default=None):
        try:
            return self[rel]
        except KeyError:
            return default

    def __contains__(self, rel) -> bool:
        return self.get(rel) is not None


def lint_findings(root: Path, config, only: list[str] | None, overlay: dict[str, bytes] | None = None):
    """(findings of ``lint_tree(load_tree(root, overlay), config, only)``, path -> bytes), from the cache when it holds them."""
    from migrate import codec

    overlay = overlay or {}
    if not cache.enabled():
        from migrate.lint import lint_root

        result = lint_root(root, overlay, config, only)
        return result.findings, result.tree.sources
    over = {root / rel for rel in overlay}
    files = [f for f in inputs(root) if f not in over]
    head = _head(root, config, only, overlay)
    fast, newest = _stat_key(head, files)
    trust_stat = newest < time.time() - RACY_S
    alias = _read(fast) if trust_stat else None
    if alias is not None and not (len(alias) == 41 and alias[:1] == b"c" and alias[1:].isalnum()):
        alias = None  # not a content key: ignore it
    slow = alias.decode() if alias else _content_key(head, files)
    blob = _read(slow)
    if blob is not None:
        try:
            findings = list(codec.loads(blob))
        except Exception:  # an unreadable entry: lint again
            blob = None
        else:
            if trust_stat and not alias:
                _write(fast, slow.encode())
            return findings, Sources(root, overlay)
    from migrate.lint import lint_root

    result = lint_root(root, overlay, config, only)
    tree, findings = result.tree, result.findings
    if _content_key(head, files) == slow:  # no input changed while linting
        _write(slow, codec.dumps(tuple(findings)))
        if trust_stat:
            _write(fast, slow.encode())
    return findings, tree.sources

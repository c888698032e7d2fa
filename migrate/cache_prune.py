"""Size and clean-up of mps-migrate's cache folder (``cache.cache_base()``).

Every part of the cache is content-addressed, so deleting any entry only costs a
re-parse or a re-compile.  ``auto_prune`` runs at most once a day (a stamp file)
and drops entries not written for ``MAX_AGE_DAYS``; ``mps-migrate cache clean``
drops them on demand.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

MAX_AGE_DAYS = 30
STAMP = ".last-prune"
DAY = 86400.0


@dataclass(frozen=True)
class Part:
    name: str
    files: int
    bytes: int


def parts(base: Path) -> list[Part]:
    """Each top-level folder of the cache with its file count and size."""
    out = []
    for d in sorted(p for p in _children(base) if p.is_dir()):
        files = size = 0
        for f in _files(d):
            with contextlib.suppress(OSError):
                size += f.stat().st_size
                files += 1
        out.append(Part(d.name, files, size))
    return out


def clean(base: Path, older_than_days: float | None = None) -> tuple[int, int]:
    """Delete entries (all, or those last written more than ``older_than_days`` ago): (files, bytes)."""
    if older_than_days is None:
        files = sum(p.files for p in parts(base))
        size = sum(p.bytes for p in parts(base))
        for d in _children(base):
            if d.is_dir():
                shutil.rmtree(d, ignore_errors=True)
        return files, size
    cutoff = time.time() - older_than_days * DAY
    files = size = 0
    for d in _children(base):
        for f in _files(d) if d.is_dir() else ():
            with contextlib.suppress(OSError):
                st = f.lstat()  # a link's own write time: the host toolchain's links to old system headers stay
                if st.st_mtime < cutoff:
                    f.unlink()
                    files, size = files + 1, size + st.st_size
    return files, size


def auto_prune(base: Path, now: float | None = None) -> bool:
    """Drop entries older than MAX_AGE_DAYS, at most once a day; True when it ran."""
    now = time.time() if now is None else now
    stamp = base / STAMP
    try:
        if now - stamp.stat().st_mtime < DAY:
            return False
    except OSError:
        pass
    with contextlib.suppress(OSError):
        base.mkdir(parents=True, exist_ok=True)
        stamp.touch()
        os.utime(stamp, (now, now))
        clean(base, MAX_AGE_DAYS)
        return True
    return False


def _children(base: Path) -> list[Path]:
    try:
        return list(base.iterdir())
    except OSError:
        return []


def _files(d: Path):
    for dirpath, _dirs, names in os.walk(d):
        for n in names:
            yield Path(dirpath) / n

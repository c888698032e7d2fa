"""Content-addressed cache of parsed models (one migrate.codec blob per file content).

Lives in ``$MPS_MIGRATE_CACHE`` or ``~/.cache/mps-migrate``; keyed by the
reader kind, the file's path and bytes, and a digest of the reader code, so a
changed file or a new mps-migrate version never sees a stale entry.  Writes go
through a temporary file and an atomic rename, so concurrent processes
(pre-commit runs hooks in parallel) share it safely.  Any cache problem falls
back to parsing.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path

_ENABLED = [os.environ.get("MPS_MIGRATE_NO_CACHE", "") == ""]


def cache_dir() -> Path:
    env = os.environ.get("MPS_MIGRATE_CACHE")
    base = Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mps-migrate"
    return base / "models"


@lru_cache(maxsize=1)
def _code_digest() -> bytes:
    from migrate.resources import rules_dir

    pkg = Path(__file__).resolve().parent
    h = hashlib.blake2b(digest_size=16)
    for f in sorted([pkg / "model.py", *(pkg / "read").glob("*.py"), *rules_dir().glob("*.yaml")]):
        with contextlib.suppress(OSError):
            h.update(f.name.encode() + f.read_bytes())
    return h.digest()


@contextlib.contextmanager
def disable_cache():
    old = _ENABLED[0]
    _ENABLED[0] = False
    try:
        yield
    finally:
        _ENABLED[0] = old


def cached(kind: str, path: str, data: bytes, parse, *extra: str):
    """Return ``parse()``'s model for these bytes, from the cache when possible (migrate.codec format)."""
    if not _ENABLED[0]:
        return parse()
    from migrate import codec

    h = hashlib.blake2b(_code_digest() + codec.VERSION, digest_size=20)
    for part in (kind, path, *extra):
        h.update(part.encode() + b"\0")
    h.update(data)
    key = h.hexdigest()
    file = cache_dir() / key[:2] / key
    try:
        with open(file, "rb") as fh:
            return codec.loads(fh.read())
    except Exception:  # missing or unreadable entry: parse
        pass
    model = parse()
    tmp = None
    try:
        blob = codec.dumps(model)
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, file)
    except Exception:  # an unwritable cache only costs speed
        if tmp:
            with contextlib.suppress(Exception):
                os.unlink(tmp)
    return model

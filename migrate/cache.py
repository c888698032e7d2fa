"""Content-addressed cache of parsed models (one migrate.codec blob per file content).

Lives in ``$MPS_MIGRATE_CACHE`` or ``~/.cache/mps-migrate``; keyed by the
reader kind, the file's path and bytes, and a digest of everything that decides a
parse: the code of the modules whose output is cached (``KEY_MODULES``), the rule
tables, and the versions of Python and of the packages the readers use
(``KEY_PACKAGES``), so a changed file, a new mps-migrate or an upgraded grammar never
sees a stale entry.  Writes go
through a temporary file and an atomic rename, so concurrent processes
(pre-commit runs hooks in parallel) share it safely.  Any cache problem falls
back to parsing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from functools import lru_cache
from pathlib import Path

_ENABLED = [os.environ.get("MPS_MIGRATE_NO_CACHE", "") == ""]


def cache_base() -> Path:
    """``$MPS_MIGRATE_CACHE``, else ``$XDG_CACHE_HOME/mps-migrate`` (``~/.cache/mps-migrate``): every cache's parent."""
    env = os.environ.get("MPS_MIGRATE_CACHE")
    return Path(env) if env else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mps-migrate"


def cache_dir() -> Path:
    return cache_base() / "models"


# Modules (relative to the package) whose code decides a cached model: the readers,
# the model and its codec, the tables they consult and tree.py's native-file scan.
KEY_MODULES = ("model.py", "codec.py", "tables.py", "resources.py", "tree.py", "cache.py", "read/*.py", "source/*.py")
KEY_PACKAGES = ("mps-migrate", "tree-sitter", "tree-sitter-cpp", "libcst", "pyyaml")


def _versions() -> str:
    """``name-version`` of each KEY_PACKAGES distribution first found on sys.path.

    Read from the ``.dist-info`` folder names (``{name}-{version}.dist-info``, as installers
    write them) where importlib.metadata would look; importing importlib.metadata itself
    would cost a warm one-file lint more than the whole key.
    """
    want = {_normalize(d): d for d in KEY_PACKAGES}
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for n in names:
            stem, dot, suffix = n.rpartition(".")
            if suffix not in ("dist-info", "egg-info"):
                continue
            name, _, version = stem.partition("-")
            key = _normalize(name)
            if key in want and key not in found:
                found[key] = version
    return ";".join(f"{d}={found.get(_normalize(d), '-')}" for d in KEY_PACKAGES)


def _normalize(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


@lru_cache(maxsize=1)
def _code_digest() -> bytes:
    from migrate.resources import rules_dir

    pkg = Path(__file__).resolve().parent
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{sys.version}\0{_versions()}".encode())
    files = [f for pattern in KEY_MODULES for f in sorted(pkg.glob(pattern))]
    for f in [*files, *sorted(rules_dir().glob("*.yaml"))]:
        with contextlib.suppress(OSError):
            h.update(b"\0" + f.relative_to(f.parents[1]).as_posix().encode() + b"\0" + f.read_bytes())
    return h.digest()


@contextlib.contextmanager
def disable_cache():
    old = _ENABLED[0]
    _ENABLED[0] = False
    try:
        yield
    finally:
        _ENABLED[0] = old


def enabled() -> bool:
    """Whether models are looked up and stored (not under disable_cache or MPS_MIGRATE_NO_CACHE)."""
    return _ENABLED[0]


def cached(kind: str, path: str, data: bytes, parse, *extra: str):
    """Return ``parse()``'s model for these bytes, from the cache when possible (migrate.codec format)."""
    if not _ENABLED[0]:
        return parse()
    from migrate import codec

    return _cached(cache_dir(), kind, path, data, parse, extra, codec.dumps, codec.loads, codec.VERSION)


def cached_plain(kind: str, path: str, data: bytes, parse):
    """``cached`` for plain data (dicts, lists, str, numbers: a parsed table), stored with marshal."""
    if not _ENABLED[0]:
        return parse()
    import marshal

    return _cached(cache_base() / "tables", kind, path, data, parse, (), marshal.dumps, marshal.loads, b"marshal")


def _file(folder: Path, kind: str, path: str, data: bytes, extra, version: bytes) -> Path:
    h = hashlib.blake2b(_code_digest() + version, digest_size=20)
    for part in (kind, path, *extra):
        h.update(part.encode() + b"\0")
    h.update(data)
    key = h.hexdigest()
    return folder / key[:2] / key


def _cached(folder: Path, kind, path, data, parse, extra, dumps, loads, version: bytes):
    file = _file(folder, kind, path, data, extra, version)
    try:
        with open(file, "rb") as fh:
            return loads(fh.read())
    except Exception:  # missing or unreadable entry: parse
        pass
    model = parse()
    with contextlib.suppress(Exception):  # an unencodable model is only not cached
        _write(file, dumps(model))
    _prune_once()
    return model


def lookup(kind: str, path: str, data: bytes, *extra: str):
    """The cached model of these bytes (``cached``'s entry), or None."""
    if not _ENABLED[0]:
        return None
    from migrate import codec

    try:
        with open(_file(cache_dir(), kind, path, data, extra, codec.VERSION), "rb") as fh:
            return codec.loads(fh.read())
    except Exception:  # missing or unreadable entry
        return None


def store_blob(kind: str, path: str, data: bytes, blob: bytes, *extra: str) -> None:
    """Store a model already in migrate.codec form as ``cached``'s entry for these bytes."""
    if _ENABLED[0]:
        from migrate import codec

        _write(_file(cache_dir(), kind, path, data, extra, codec.VERSION), blob)


_PRUNED = [False]


def _prune_once() -> None:
    """After a miss (a parse, so time is being spent anyway): the daily clean-up, once per process."""
    if not _PRUNED[0]:
        _PRUNED[0] = True
        from migrate.cache_prune import auto_prune

        auto_prune(cache_base())


def _write(file: Path, blob: bytes) -> None:
    """Atomically; an unwritable cache only costs speed."""
    import tempfile

    tmp = None
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, file)
    except Exception:
        if tmp:
            with contextlib.suppress(Exception):
                os.unlink(tmp)

"""mps-migrate cache: where the caches are, their sizes, and clean-up."""

from __future__ import annotations

import json

from migrate.cache import cache_base
from migrate.cache_prune import MAX_AGE_DAYS, clean, parts
from migrate.errors import UsageError

HELP = "show the cache folder and its size, or clean it (`cache clean [--older-than DAYS]`)"


def add_arguments(p) -> None:
    p.add_argument("action", nargs="?", choices=("info", "clean"), default="info")
    p.add_argument(
        "--older-than",
        type=float,
        metavar="DAYS",
        help=f"clean only entries written more than DAYS days ago (entries older than {MAX_AGE_DAYS} "
        "days are dropped automatically once a day)",
    )
    p.add_argument("--format", choices=("text", "json"), default="text")


def run(args) -> int:
    base = cache_base()
    if args.action == "clean":
        if args.older_than is not None and args.older_than < 0:
            raise UsageError("--older-than: DAYS must be >= 0")
        files, size = clean(base, args.older_than)
        print(f"removed {files} cache files ({_mb(size)}) from {base}")
        return 0
    if args.older_than is not None:
        raise UsageError("--older-than only goes with `cache clean`")
    found = parts(base)
    if args.format == "json":
        print(json.dumps({"path": str(base), "parts": [p.__dict__ for p in found]}, indent=2))
        return 0
    print(f"{base}: {_mb(sum(p.bytes for p in found))} in {sum(p.files for p in found)} files")
    for p in found:
        print(f"  {p.name:<10} {p.files:>7} files  {_mb(p.bytes):>10}")
    return 0


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"

"""Time read_native_yaml against torchgen's parse_native_yaml on the same file.

    /work/venv/bin/python bench/bench_yaml.py [--runs N] [--yaml PATH [--tags PATH]] [--torchgen-root DIR]

Defaults to the native_functions.yaml / tags.yaml shipped in the installed
torchgen.  ``--torchgen-root`` imports torchgen from DIR (a PyTorch source tree,
e.g. 2.6.0 whose yaml the installed torchgen no longer parses).  Prints the
best-of-N wall time of each and their ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from migrate.read.yaml_reader import read_native_yaml  # noqa: E402


def best_of(runs: int, fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="runs of the reader (torchgen gets max(3, runs // 5))")
    ap.add_argument("--yaml", type=Path, default=None)
    ap.add_argument("--tags", type=Path, default=None)
    ap.add_argument("--torchgen-root", type=Path, default=None)
    args = ap.parse_args()
    if args.torchgen_root:
        sys.path.insert(0, str(args.torchgen_root))

    import torchgen
    import torchgen.gen as tg

    native_dir = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    yaml_path = args.yaml or native_dir / "native_functions.yaml"
    tags_path = args.tags or yaml_path.parent / "tags.yaml"
    data = yaml_path.read_bytes()

    parsed = read_native_yaml(data, "native_functions.yaml")
    ours = best_of(args.runs, lambda: read_native_yaml(data, "native_functions.yaml"))

    def torchgen_parse() -> object:
        tg._GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()  # parse_native_yaml memoises by path
        return tg.parse_native_yaml(str(yaml_path), str(tags_path))

    ref_runs = max(3, args.runs // 5)
    ref = best_of(ref_runs, torchgen_parse)

    lines = data.count(b"\n") + 1
    print(f"file: {yaml_path} ({len(data):,} bytes, {lines:,} lines)")
    print(
        f"entries: {len(parsed.entries)}, dispatch lines: {sum(len(e.dispatch) for e in parsed.entries)}, errors: {len(parsed.errors)}"
    )
    print(f"read_native_yaml:            {ours * 1000:8.1f} ms  (best of {args.runs})")
    print(f"torchgen parse_native_yaml:  {ref * 1000:8.1f} ms  (best of {ref_runs})")
    print(f"ratio: torchgen / reader = {ref / ours:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

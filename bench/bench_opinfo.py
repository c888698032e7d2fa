"""Time finding one op's OpInfo entries (and their MPS expectations) in torch's 1.4 MB OpInfo database.

    python bench/bench_opinfo.py [OP]     (default: atan2)

Compares with a full libcst parse of the same file (the naive approach). Target: one op under 0.5 s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    import libcst

    from migrate.opinfo import installed_opinfo_file
    from migrate.read.opinfo_reader import find_entries

    op = sys.argv[1] if len(sys.argv) > 1 else "atan2"
    f = installed_opinfo_file()
    data = f.read_bytes()
    t = time.perf_counter()
    data = f.read_bytes()
    entries = find_entries(data, str(f), [op])
    one = time.perf_counter() - t
    t = time.perf_counter()
    every = find_entries(data, str(f))
    all_ = time.perf_counter() - t
    t = time.perf_counter()
    libcst.parse_module(data.decode())
    full = time.perf_counter() - t
    print(f"{f} ({len(data) / 1e6:.2f} MB)")
    print(f"one op ({op}): {one * 1000:7.1f} ms  ({len(entries)} entries)")
    print(
        f"every entry:   {all_ * 1000:7.1f} ms  ({len(every)} entries, "
        f"{sum(len(e.mps_decorations) for e in every)} MPS expectations)"
    )
    print(f"full libcst:   {full * 1000:7.1f} ms")


if __name__ == "__main__":
    main()

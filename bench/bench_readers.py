"""Time the Metal and common_mps.py readers.

    /work/venv/bin/python bench/bench_readers.py [PYTORCH_2_6_ROOT]

Prints best-of-N wall times: every .metal file of the 2.6.0 tree plus the
Metal raw strings of its .mm/.h files; a synthetic modern-sized kernel file
(540 base registrations through convenience macros, against the installed
c10/metal/indexing.h); the installed common_mps.py (uncached).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import best, pytorch_tree  # noqa: E402

from migrate.read import xfail_reader  # noqa: E402
from migrate.read.metal_reader import default_include_dirs, read_metal_source  # noqa: E402

RAW = re.compile(rb'R"(\w*)\((.*?)\)\1"', re.S)


def synthetic() -> bytes:
    lines = ["#include <c10/metal/indexing.h>"]
    lines.append(
        "#define INTS(N) "
        + "; ".join(f"REGISTER_BINARY_OP(N, {t}, {t})" for t in ("long", "int", "short", "uchar", "char", "bool"))
    )
    lines.append(
        "#define FLOATS(N) " + "; ".join(f"REGISTER_BINARY_OP(N, {t}, {t})" for t in ("float", "half", "bfloat"))
    )
    for i in range(60):
        lines.append(f"struct op{i}_functor {{ template <typename T> T operator()(T a, T b) {{ return a; }} }};")
        lines.append(f"FLOATS(op{i});\nINTS(op{i});")
    return "\n".join(lines).encode()


def main() -> None:
    inc = default_include_dirs()
    root = pytorch_tree(sys.argv[1] if len(sys.argv) > 1 else None)
    if root is not None:
        mps = root / "aten/src/ATen/native/mps"
        files = [(f.name, f.read_bytes()) for f in sorted(mps.glob("kernels/*.metal"))]
        for f in sorted([*mps.glob("operations/*.mm"), *mps.glob("*.h")]):
            for m in RAW.finditer(f.read_bytes()):
                files.append((f.name, m.group(2)))
        size = sum(len(d) for _, d in files)
        t = best(lambda: [read_metal_source(d, n, include_dirs=inc) for n, d in files])
        print(f"2.6.0 Metal: {len(files)} sources, {size / 1024:.0f} KiB: {t * 1000:.1f} ms")
    else:
        print("2.6.0 tree unavailable; skipped")
    syn = synthetic()
    t = best(lambda: read_metal_source(syn, "synthetic.metal", include_dirs=inc))
    regs = len(read_metal_source(syn, "synthetic.metal", include_dirs=inc).registrations)
    print(f"synthetic modern file: {regs} registrations: {t * 1000:.1f} ms")
    spec = importlib.util.find_spec("torch")
    if spec and spec.origin:
        p = Path(spec.origin).parent / "testing/_internal/common_mps.py"
        data = p.read_bytes()

        def uncached() -> None:
            xfail_reader._read_cached.cache_clear()
            xfail_reader.read_common_mps(data, "common_mps.py")

        import libcst

        print(
            f"common_mps.py ({len(data.splitlines())} lines): {best(uncached) * 1000:.1f} ms"
            f" (libcst.parse_module alone: {best(lambda: libcst.parse_module(data)) * 1000:.1f} ms)"
        )


if __name__ == "__main__":
    main()

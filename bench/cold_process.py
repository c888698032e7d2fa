"""One cold run in this new process, timed after its imports: ``python bench/cold_process.py WHAT ROOT``.

WHAT is ``torchgen`` (the tree's torchgen parsing its own native_functions.yaml and tags.yaml) or ``lint``
(``lint_root`` with the parse cache off).  Prints the milliseconds.  bench_lint.py runs it, one new process
per run, because that is what a cold ``mps-migrate lint`` is: a process whose heap holds nothing yet, so
every page its parse writes is a fresh one, for torchgen and for lint alike (in one long process, later
runs reuse the freed pages of earlier ones, which a fork's copy-on-write then has to copy).
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

from common import REPO  # noqa: F401  (puts the checkout first on sys.path)


def main() -> None:
    what, root = sys.argv[1], Path(sys.argv[2])
    if what == "torchgen":
        if (root / "torchgen" / "gen.py").is_file():
            sys.path.insert(0, str(root))
        import torchgen.gen as tg

        native = root / "aten/src/ATen/native"
        run = lambda: tg.parse_native_yaml(str(native / "native_functions.yaml"), str(native / "tags.yaml"))  # noqa: E731
    else:
        import yaml  # noqa: F401  (PyYAML, for rules/ tables: torchgen's import above loads it too)

        import migrate.codec  # noqa: F401  (the modules a lint imports on its way, imported before the clock)
        import migrate.fixes  # noqa: F401
        import migrate.read.host_reader  # noqa: F401
        import migrate.read.metal_flow  # noqa: F401
        import migrate.read.metal_reader  # noqa: F401
        import migrate.read.native_scan  # noqa: F401
        import migrate.read.yaml_reader  # noqa: F401
        from migrate.cache import disable_cache
        from migrate.lint import lint_root
        from migrate.registry import all_rules

        all_rules()

        def run():
            with disable_cache():
                lint_root(root)

    gc.disable()  # as the CLI does
    t = time.perf_counter()
    run()
    print(f"{(time.perf_counter() - t) * 1000:.2f}")


if __name__ == "__main__":
    main()

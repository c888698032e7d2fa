"""Time the full lint of a real tree against torchgen's parse of the same yaml, in one run.

    python bench/bench_lint.py [ROOT]     (default: the PyTorch 2.6.0 tree from ../shared/corpus)

Prints best-of-N wall times and the ratio lint / torchgen (target: <= 0.3).  Each "no cache" run
also starts from empty per-process memos (the shared SourceFiles and their token streams, macro dry
runs): a cold ``mps-migrate lint`` process has none, and they would otherwise carry over between runs.
For the same reason every run starts after a ``gc.collect()`` (outside its time): the collector is off
while timing, as in the CLI, and the garbage of earlier runs would otherwise pile up (450 MB after the
30 runs), making each later fork and page fault dearer than in a fresh process.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from common import best, cold_ms, pytorch_tree

N = int(os.environ.get("BENCH_N", "5"))


def main() -> None:
    root = pytorch_tree(sys.argv[1] if len(sys.argv) > 1 else None)
    if (root / "torchgen" / "gen.py").is_file():
        sys.path.insert(0, str(root))  # the tree's own torchgen parses its own yaml
    import torchgen.gen as tg

    print(f"torchgen from {Path(tg.__file__).parent}")

    from migrate.cache import disable_cache
    from migrate.lint import lint_root, lint_tree
    from migrate.tree import YAML_REL, load_tree

    yaml_path = root / YAML_REL
    tags_path = yaml_path.with_name("tags.yaml")

    def torchgen_parse():
        tg._GLOBAL_PARSE_NATIVE_YAML_CACHE.clear()
        tg._GLOBAL_PARSE_TAGS_YAML_CACHE.clear()
        tg.parse_native_yaml(str(yaml_path), str(tags_path))

    def forget():
        """Empty the per-process memos a fresh process starts without (those the code has)."""
        import importlib

        for module, name in (
            ("migrate.source.file", "_OPEN"),
            ("migrate.read.host_reader", "_DRY_RUNS"),
            ("migrate.read.metal_flow", "_HELPERS"),
        ):
            getattr(importlib.import_module(module), name, {}).clear()

    def lint_cold():  # as `mps-migrate lint` runs it
        forget()
        with disable_cache():
            lint_root(root)

    def lint_forked_rules():  # the Metal flow rules on a fork made after the parse (rule_pool's other path)
        forget()
        with disable_cache():
            lint_tree(load_tree(root))

    def lint_warm():
        lint_tree(load_tree(root))

    def jobs(n, fn):
        def run():
            os.environ["MPS_MIGRATE_JOBS"] = str(n)
            try:
                fn()
            finally:
                os.environ.pop("MPS_MIGRATE_JOBS")

        return run

    def read_cold():
        forget()
        with disable_cache():
            load_tree(root)

    import gc

    cores = len(os.sched_getaffinity(0))
    print(
        f"{cores} cores, load average {os.getloadavg()[0]:.1f}"
        " (auto: one process per idle core, when 2+ are idle: parse_pool.busy_cores)"
    )
    gc.disable()  # as the CLI does
    lint_warm()  # fill the parse cache
    cases = {
        "torchgen parse_native_yaml": torchgen_parse,
        "mps-migrate lint, no cache": lint_cold,
        "  same, one process (MPS_MIGRATE_JOBS=1)": jobs(1, lint_cold),
        f"  same, {cores} processes (MPS_MIGRATE_JOBS={cores})": jobs(cores, lint_cold),
        "  same, Metal rules on a fork after the parse": lint_forked_rules,
        "  of which load_tree (auto)": read_cold,
        "mps-migrate lint, warm cache": lint_warm,
    }
    times = {name: [] for name in cases}
    cpu = {name: [] for name in cases}  # this process's CPU time: what a loaded machine disturbs least
    for _ in range(N):  # interleaved, so a load change on a shared machine hits every case alike
        for name, fn in cases.items():
            # With the collector off, each run's cycles stay: a fresh process has none of that garbage, and
            # without this each later fork copies the page tables of a heap grown by every earlier run.
            gc.collect()
            c = time.process_time()
            times[name].append(best(fn, 1))
            cpu[name].append(time.process_time() - c)
    t = {name: min(v) for name, v in times.items()}
    c = {name: min(v) for name, v in cpu.items()}
    t_tg, c_tg = t["torchgen parse_native_yaml"], c["torchgen parse_native_yaml"]
    n = len(load_tree(root).hosts)
    print(f"tree: {root} ({n} host files), best of {N}; wall, and this process's CPU (a pool's workers not counted)")
    for name, v in t.items():
        print(
            f"{name:<42} {v * 1000:8.1f} ms   ratio {v / t_tg:.2f}   cpu {c[name] * 1000:7.1f} ms   ratio {c[name] / c_tg:.2f}"
        )
    print("target (issue 11): lint, no cache <= 0.3 x torchgen")
    fresh_processes(root)


def fresh_processes(root: Path) -> None:
    """The same cold runs, each in a new process (bench/cold_process.py: timed after its imports), interleaved."""
    cases = {
        "torchgen parse_native_yaml": ("torchgen", None),
        "mps-migrate lint, no cache": ("lint", None),
        "  same, one process (MPS_MIGRATE_JOBS=1)": ("lint", "1"),
        "  same, 2 processes (MPS_MIGRATE_JOBS=2)": ("lint", "2"),
    }
    times = {name: [] for name in cases}
    for _ in range(N):
        for name, (what, jobs) in cases.items():
            times[name].append(cold_ms(what, root, jobs) / 1000)
    print(
        f"\neach run in a new process (imports before the clock), best and median of {N}; paired: the median of"
        " each round's ratio to that round's torchgen run (a load change between rounds cancels out):"
    )
    t_tg = times["torchgen parse_native_yaml"]
    for name, v in times.items():
        lo, mid = min(v), sorted(v)[len(v) // 2]
        paired = sorted(a / b for a, b in zip(v, t_tg))[len(v) // 2]
        print(
            f"{name:<42} {lo * 1000:8.1f} ms   ratio {lo / min(t_tg):.2f}"
            f"   median {mid * 1000:7.1f} ms   ratio {mid / sorted(t_tg)[len(v) // 2]:.2f}   paired {paired:.2f}"
        )


if __name__ == "__main__":
    main()

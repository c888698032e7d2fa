"""Mutation testing of the core with mutmut (configured in pyproject's [tool.mutmut]); not run by CI.

    .venv/bin/python bench/mutation.py [GROUP ...] [--score-only] [--survivors] [--retest]

GROUPs (default: all, fastest first): compare, yaml, checks, index, fixes; review is the part of checks
that reviews Metal code (MPS016-021).
Each group runs ``nice -n 19 mutmut run --max-children 1`` over its mutants (each mutant
against the tests of pyproject's test selection that reach the mutated function), then the
score per module is printed: killed / (total - equivalent).  Equivalent mutants are the ones
docs/mutation.md lists with a reason.  Results stay in mutants/ (``mutmut show NAME``);
``--score-only`` prints the table from them without running anything; ``--retest`` runs only
the mutants not killed yet (after adding tests).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from fnmatch import fnmatch
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLS = "\u01c1"  # mutmut's class separator in mutant names
YAML_DISPATCH = ("dispatch_line", "fast_dispatch")
INDEX_ROUTES = (
    "_route",
    "_explicit_route",
    "impl_of",
    "marker_closure",
    "_classify",
    "definition",
    "stubs_of_shared_kernel",
    "mps_line",
    "used_by_other_backend",
    "metal_kernel_exists",
    "family_is_native_metal",
)

# group -> mutant name patterns (mutmut's fnmatch syntax), fastest first
GROUPS: dict[str, list[str]] = {
    "compare": ["migrate.verify.compare.*"],
    "yaml": [f"migrate.read.yaml_reader.x{CLS}_Scanner{CLS}{f}__mutmut_*" for f in YAML_DISPATCH]
    + [
        "migrate.read.yaml_reader.x__split_with_offsets__mutmut_*",
        "migrate.read.yaml_reader.x_effective_dispatch__mutmut_*",
    ],
    "checks": ["migrate.checks.*"],
    "review": [  # the Metal review rules (part of checks): the data-flow rules and MPS019
        f"migrate.checks.{m}.*"
        for m in (
            "mps016_nan_minmax",
            "mps017_divergent_collective",
            "mps018_fast_math",
            "mps019_graph_fallback",
            "mps020_handrolled_reduction",
            "mps021_narrow_offset",
        )
    ],
    "index": [f"migrate.index.x{CLS}Index{CLS}{f}__mutmut_*" for f in INDEX_ROUTES]
    + [f"migrate.index.x_{f}__mutmut_*" for f in ("is_shared", "looks_mps_only", "stub_candidates")],
    "fixes": [
        "migrate.fixes.*",
        "migrate.apply.x_plan_fixes__mutmut_*",
        "migrate.apply.x_atomic_write__mutmut_*",
        "migrate.fixloop.*",
    ],
}
KILLED = {1, 3, 36, -24, 24, 152, 255, -11, -9}  # failed, pytest error, timeout, crash
SURVIVED = {0}


def equivalent_mutants() -> set[str]:
    doc = REPO / "docs" / "mutation.md"
    text = doc.read_text(encoding="utf-8") if doc.is_file() else ""
    section = text.partition("## Equivalent mutants")[2].split("\n## ")[0]
    return set(re.findall(r"`(migrate\.[^`\s]+__mutmut_\d+)`", section))


def results() -> dict[str, int | None]:
    """Mutant name -> mutmut's exit code (None: not run yet), from mutants/**/*.meta."""
    out: dict[str, int | None] = {}
    for meta in (REPO / "mutants" / "migrate").rglob("*.py.meta"):
        out.update(json.loads(meta.read_text())["exit_code_by_key"])
    return out


def module_of(name: str) -> str:
    mod = re.split(r"\.x(?:_|" + CLS + ")", name, maxsplit=1)[0]
    return mod + " (dispatch)" if mod.endswith("yaml_reader") else mod


def score(groups: list[str], show_survivors: bool) -> int:
    equivalent, res = equivalent_mutants(), results()
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    survivors, others = [], []
    for name, code in sorted(res.items()):
        if not any(fnmatch(name, p) for g in groups for p in GROUPS[g]):
            continue
        r = rows[module_of(name)]
        r["total"] += 1
        if name in equivalent:
            r["equivalent"] += 1
        elif code in KILLED:
            r["killed"] += 1
        elif code in SURVIVED:
            r["survived"] += 1
            survivors.append(name)
        else:
            r["other"] += 1  # no tests reach it, not run yet, ...
            others.append(name)
    print(f"{'module':46} {'killed/scored':>14} {'survived':>9} {'other':>6} {'equiv':>6} {'score':>7}")
    bad = 0
    for mod, r in sorted(rows.items()):
        scored = r["total"] - r["equivalent"]
        pct = 100.0 * r["killed"] / scored if scored else 100.0
        bad += pct < 90.0
        print(
            f"{mod:46} {r['killed']:>6}/{scored:<7} {r['survived']:>9} {r['other']:>6} {r['equivalent']:>6} {pct:>6.1f}%"
        )
    if show_survivors:
        print("\nsurvived:", *survivors, sep="\n  ")
        print("\nnot run, or no test reaches them:", *others, sep="\n  ")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("groups", nargs="*", metavar="GROUP", help=f"one of {', '.join(GROUPS)} (default: all)")
    ap.add_argument("--score-only", action="store_true")
    ap.add_argument("--survivors", action="store_true", help="list the mutants not killed")
    ap.add_argument("--retest", action="store_true", help="run only the mutants a previous run did not kill")
    args = ap.parse_args()
    groups = args.groups or [g for g in GROUPS if g != "review"]  # review: a part of checks
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        ap.error(f"unknown group {unknown[0]!r} (known: {', '.join(GROUPS)})")
    mutmut = Path(sys.executable).with_name("mutmut")
    env = dict(os.environ, MPS_MIGRATE_CACHE=str(REPO / "mutants" / ".mps-migrate-cache"))  # never the user's cache
    if not args.score_only:
        for g in groups:
            names = GROUPS[g]
            if args.retest:
                equivalent = equivalent_mutants()
                names = [
                    n
                    for n, code in sorted(results().items())
                    if code not in KILLED and n not in equivalent and any(fnmatch(n, p) for p in names)
                ]
                if not names:
                    continue
            print(f"== {g}", flush=True)
            subprocess.run(
                ["nice", "-n", "19", str(mutmut), "run", "--max-children", "1", *names], cwd=REPO, env=env, check=False
            )
    return score(groups, args.survivors)


if __name__ == "__main__":
    sys.exit(main())

"""Mutation testing of the core with mutmut (configured in pyproject's [tool.mutmut]); not run by CI.

    .venv/bin/python bench/mutation.py [GROUP ...] [--score-only] [--survivors] [--retest]
    .venv/bin/python bench/mutation.py --own-tests [MODULE ...] [--score-only] [--survivors] [--retest|--resume]

GROUPs (default: all, fastest first): compare, yaml, checks, index, fixes; review is the part of checks
that reviews Metal code (MPS016-021).
Each group runs ``nice -n 19 mutmut run --max-children 1`` over its mutants (each mutant
against the tests of pyproject's test selection that reach the mutated function), then the
score per module is printed: killed / (total - equivalent).  Equivalent mutants are the ones
docs/mutation.md lists with a reason.  Results stay in mutants/ (``mutmut show NAME``);
``--score-only`` prints the table from them without running anything; ``--retest`` runs only
the mutants not killed yet (after adding tests).

``--own-tests`` mutates one module at a time and runs its mutants against that module's own tests
only (see OWN_TESTS below): MODULEs are rule codes (MPS001), ``metal_reader``, ``review``
(MPS016-021) or ``checks`` (every rule); default: every rule and metal_reader.  mutmut 3.8.1
takes its test selection from one global list in pyproject's [tool.mutmut], and it prefers
pyproject.toml over setup.cfg, so each module runs in its own scratch copy of the project
(mutants/own/MODULE/, git-ignored) whose pyproject.toml has that module's [tool.mutmut]; the
repository's pyproject (and the results in mutants/) are left alone.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
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


# --own-tests: a module's own tests -------------------------------------------------------------------------
# A rule's own tests: its cases (rules/cases/MPSNNN.yaml, run by tests/test_rule_cases.py with ids "MPSNNN-..."),
# the tests named after it (test_mpsNNN_...) in the files below, and every test of a file that is its alone.
CASES_RUNNER = "tests/test_rule_cases.py"
NAMED_TESTS_IN = (
    "tests/test_mut_checks.py",
    "tests/test_review_rules.py",
    "tests/test_mut_review_mps016_017.py",
    "tests/test_mut_review_mps019.py",
    "tests/test_mut_review_mps020.py",
    "tests/test_shadowed_dispatch_key.py",
)
OWN_FILES = {  # module -> files all of whose tests are its own
    "MPS021": ("tests/test_mut_review_mps021.py",),
    "MPS022": ("tests/test_shadowed_dispatch_key.py",),
    "metal_reader": ("tests/test_metal_reader.py",),
}
OTHER_MODULES = {"metal_reader": "migrate/read/metal_reader.py"}
REVIEW = tuple(f"MPS{n:03d}" for n in range(16, 22))
OWN_DIR = REPO / "mutants" / "own"


def own_modules() -> dict[str, str]:
    """Module key (rule code, or a name of OTHER_MODULES) -> its source file, relative to the repository."""
    rules = {
        p.name.split("_", 1)[0].upper(): p.relative_to(REPO).as_posix()
        for p in sorted((REPO / "migrate" / "checks").glob("mps[0-9]*_*.py"))
    }
    return rules | OTHER_MODULES


def own_tests(key: str) -> list[str]:
    """pytest arguments that select the own tests of module ``key`` (files, then ``-k``)."""
    whole = list(OWN_FILES.get(key, ()))
    if not key.startswith("MPS"):
        return whole
    named = f"test_{key.lower()}_"
    files = [CASES_RUNNER] + [
        f for f in NAMED_TESTS_IN if f not in whole and f"def {named}" in (REPO / f).read_text(encoding="utf-8")
    ]
    keyword = " or ".join([f"{key}-", named, *(Path(f).name for f in whole)])
    return files + whole + ["-k", keyword]


def own_pyproject(source: str, selection: list[str]) -> str:
    """The repository's pyproject.toml with a [tool.mutmut] that mutates ``source`` and selects ``selection``."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    conf = tomllib.loads(text)["tool"]["mutmut"]
    conf.update(
        only_mutate=[source],
        pytest_add_cli_args_test_selection=selection,
        use_git_change_detection=False,  # the scratch copy lies inside the repository's work tree
    )
    table = "[tool.mutmut]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in conf.items())
    new, n = re.subn(r"^\[tool\.mutmut\]\n.*?(?=^\[)", lambda _: table + "\n", text, count=1, flags=re.M | re.S)
    assert n == 1, "no [tool.mutmut] table in pyproject.toml"
    return new


def scratch_project(key: str, source: str, selection: list[str], fresh: bool) -> Path:
    """mutants/own/KEY: a copy of what the tests need, configured for one module (emptied first when ``fresh``)."""
    root = OWN_DIR / key
    if fresh:
        shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    for d in ("migrate", "tests", "rules", "kernels", "fixtures"):
        shutil.copytree(REPO / d, root / d, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "pyproject.toml").write_text(own_pyproject(source, selection), encoding="utf-8")
    return root


def own_targets(names: list[str], ap: argparse.ArgumentParser) -> list[str]:
    modules = own_modules()
    rules = [k for k in modules if k.startswith("MPS")]
    out: list[str] = []
    for n in names or [*rules, *OTHER_MODULES]:
        groups = {"checks": rules, "review": list(REVIEW)}
        keys = groups.get(n) or [n.upper() if n.lower().startswith("mps") else n]
        for k in keys:
            if k not in modules:
                ap.error(f"unknown module {n!r} (known: checks, review, {', '.join(modules)})")
            out += [k] if k not in out else []
    return out


def run_own(keys: list[str], retest: bool, show_survivors: bool, score_only: bool, resume: bool = False) -> int:
    modules, mutmut = own_modules(), Path(sys.executable).with_name("mutmut")
    env = dict(os.environ, MPS_MIGRATE_CACHE=str(OWN_DIR / ".mps-migrate-cache"))  # never the user's cache
    res: dict[str, int | None] = {}
    for key in keys:
        source, selection = modules[key], own_tests(key)
        module = source.removesuffix(".py").replace("/", ".")
        names: list[str] = []
        if retest:  # only the mutants the last run of this module did not kill
            equivalent, old = equivalent_mutants(), results(OWN_DIR / key)
            names = [n for n, c in sorted(old.items()) if c not in KILLED and n not in equivalent]
        if not score_only and (names or not retest):
            root = scratch_project(key, source, selection, fresh=not (retest or resume))
            print(f"== {key}: {source} against: {' '.join(selection)}", flush=True)
            t0 = time.monotonic()
            cmd = ["nice", "-n", "19", str(mutmut), "run", "--max-children", "1", *names]
            subprocess.run(cmd, cwd=root, env=env, check=False)
            print(f"== {key}: {time.monotonic() - t0:.0f} s", flush=True)
        res.update({n: c for n, c in results(OWN_DIR / key).items() if n.startswith(module + ".")})
    return table(res, show_survivors)


def equivalent_mutants() -> set[str]:
    doc = REPO / "docs" / "mutation.md"
    text = doc.read_text(encoding="utf-8") if doc.is_file() else ""
    section = text.partition("## Equivalent mutants")[2].split("\n## ")[0]
    return set(re.findall(r"`(migrate\.[^`\s]+__mutmut_\d+)`", section))


def results(project: Path = REPO) -> dict[str, int | None]:
    """Mutant name -> mutmut's exit code (None: not run yet), from PROJECT/mutants/**/*.meta."""
    out: dict[str, int | None] = {}
    for meta in (project / "mutants" / "migrate").rglob("*.py.meta"):
        out.update(json.loads(meta.read_text())["exit_code_by_key"])
    return out


def module_of(name: str) -> str:
    mod = re.split(r"\.x(?:_|" + CLS + ")", name, maxsplit=1)[0]
    return mod + " (dispatch)" if mod.endswith("yaml_reader") else mod


def score(groups: list[str], show_survivors: bool) -> int:
    res = {n: c for n, c in results().items() if any(fnmatch(n, p) for g in groups for p in GROUPS[g])}
    return table(res, show_survivors)


def table(res: dict[str, int | None], show_survivors: bool) -> int:
    """Print the score per module of the mutants ``res``; 1 when a module scores below 90%."""
    equivalent = equivalent_mutants()
    rows: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    survivors, others = [], []
    for name, code in sorted(res.items()):
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
    ap.add_argument(
        "--own-tests",
        action="store_true",
        help="each module alone against its own tests (GROUPs are then modules: MPS001, metal_reader, review, checks)",
    )
    ap.add_argument("--score-only", action="store_true")
    ap.add_argument("--survivors", action="store_true", help="list the mutants not killed")
    ap.add_argument("--retest", action="store_true", help="run only the mutants a previous run did not kill")
    ap.add_argument(
        "--resume", action="store_true", help="--own-tests: go on with a stopped run (only the mutants not run yet)"
    )
    args = ap.parse_args()
    if args.own_tests:
        return run_own(own_targets(args.groups, ap), args.retest, args.survivors, args.score_only, args.resume)
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

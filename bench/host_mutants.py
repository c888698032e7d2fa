"""Hand-planted mutants of the host path's pure logic (migrate/host_code/run.py's cells, coverage.py's send
reader), each run against the fast unit tests that name the behaviour, in a copy of the checkout (git ls-files):

    python bench/host_mutants.py

mutmut cannot see these tests' reach through the worker process, so the host path has this list instead.
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = [
    "tests/test_host_own_cases.py::test_collect_cells_keeps_layout_names_and_separates_clean_refusals",
    "tests/test_host_own_cases.py::test_sends_are_read_through_ternaries_preprocessor_branches_and_cxx_brackets",
    "tests/test_host_own_cases.py::test_the_shim_coverage_list_is_generated_from_the_shipped_trees_sends",
    "tests/test_host_code.py::test_a_dtype_the_host_code_refuses_for_every_sample_is_reported_apart",
    "tests/test_host_own_cases.py::test_the_trees_expectations_make_a_failing_cell_xfail_and_a_passing_xfail_stale",
]
MUTANTS = [
    ("migrate/host_code/run.py", "if self.failed and self.expected:", "if self.failed and False:"),
    ("migrate/host_code/run.py", 'if self.ok and self.expected and self.expected["kind"] == "xfail":', "if False:"),
    (
        "migrate/host_code/run.py",
        'return "FAIL" if any(c.status in ("FAIL", "XPASS")',
        'return "FAIL" if any(c.status in ("FAIL",)',
    ),
    (
        "migrate/host_code/run.py",
        'if "failure" in row and layout and _REFUSAL.search(row["failure"]):',
        'if "failure" in row and _REFUSAL.search(row["failure"]):',
    ),
    (
        "migrate/host_code/run.py",
        "cell.failed.append(f\"{layout or 'sample'} {i}: {row['failure']}\")",
        "cell.failed.append(f\"sample {i}: {row['failure']}\")",
    ),
    (
        "migrate/host_code/run.py",
        "elif all(_REFUSAL.search(m) for m in messages):",
        "elif any(_REFUSAL.search(m) for m in messages):",
    ),
    (
        "migrate/host_code/run.py",
        'fallbacks |= {f.removeprefix("aten::") for f in row.get("fallbacks", ())}',
        'fallbacks |= set(row.get("fallbacks", ()))',
    ),
    (
        "migrate/host_code/run.py",
        '            cell.passed += 1\n            if row.get("upcast"):',
        '            cell.passed += 0\n            if row.get("upcast"):',
    ),
    (
        "migrate/host_code/coverage.py",
        'elif ch == ":" and pending and top[i + 1 : i + 2] != ":" and top[i - 1 : i] != ":":',
        'elif ch == ":" and pending:',
    ),
    ("migrate/host_code/coverage.py", 'out.append("" if any(skipping) else line)', "out.append(line)"),
    ("migrate/host_code/coverage.py", 'out.append("_" if depth == 1 else " ")', 'out.append(" ")'),
    ("migrate/host_code/coverage.py", 'sel = None if "##" in top else _selector(top)', "sel = _selector(top)"),
    (
        "migrate/host_code/coverage.py",
        "if len(words) < 2 or not _IDENT.fullmatch(words[-1])",
        "if len(words) < 1 or not _IDENT.fullmatch(words[-1])",
    ),
    (
        "migrate/host_code/coverage.py",
        "if not receiver.strip() or not receiver[-1].isspace() or _OPERATOR_END.search(receiver):",
        "if not receiver.strip():",
    ),
    (
        "migrate/host_code/coverage.py",
        '        if sel in runs:\n            out[sel] = "runs"',
        '        if sel in declared:\n            out[sel] = "runs"',
    ),
    ("migrate/host_code/coverage.py", 'out.add(f"set{name[0].upper()}{name[1:]}:")', "pass"),
]


def main() -> int:
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    with tempfile.TemporaryDirectory(prefix="host-mutants-") as tmp:
        wt = Path(tmp)
        for name in files:
            (wt / name).parent.mkdir(parents=True, exist_ok=True)
            if (REPO / name).is_file():
                shutil.copy2(REPO / name, wt / name)
        results = [_run(wt, *m) for m in MUTANTS]
    for r in results:
        print(*r, sep=" | ")
    survived = sum(r[0] == "SURVIVED" for r in results)
    print(f"{len(results) - survived} of {len(results)} killed")
    return 1 if survived else 0


def _run(wt: Path, path: str, old: str, new: str) -> tuple[str, str, str]:
    f = wt / path
    text = f.read_text()
    assert old in text, (path, old)
    f.write_text(text.replace(old, new, 1))
    try:
        env = {"PYTHONPATH": str(wt), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())}
        cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *TESTS]
        p = subprocess.run(cmd, cwd=wt, capture_output=True, text=True, env=env)
        return ("killed" if p.returncode else "SURVIVED", path, new[:70].replace("\n", " "))
    finally:
        f.write_text(text)


if __name__ == "__main__":
    sys.exit(main())

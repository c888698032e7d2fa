"""What a new user sees: typos in code flags, the summary, --fail-on, "nothing to fix", -o, baselines, --since.

Each test names the complaint of issue 14 it would have caught.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter

import pytest

from tests.helpers import FIXTURES, MINI, OPS, YAML, lint_json, run_cli

CLEAN_FILE = MINI / OPS / "UnaryKernel.mm"  # no finding located in it


@pytest.fixture()
def tree(tmp_path):
    dst = tmp_path / "tree"
    shutil.copytree(MINI, dst)
    return dst


# ------------------------------------------------ typos exit 2 (they passed silently)
@pytest.mark.parametrize(
    "flag, value",
    [
        ("--select", "MPS999"),
        ("--select", "FOO"),
        ("--select", "mps001"),
        ("--ignore", "MPS999"),
        ("--extend-ignore", "MPS0,MPX"),
        ("--extend-select", "XYZ"),
    ],
)
def test_unknown_code_in_a_flag_is_a_usage_error(flag, value):
    bad = value.split(",")[-1]
    p = run_cli("lint", str(MINI), flag, value)
    assert p.returncode == 2 and p.stdout == ""
    assert (
        p.stderr
        == f"mps-migrate: error: {flag}: unknown rule code or prefix {bad!r}"
        + (" (codes are upper case: 'MPS001')" if bad == "mps001" else "")
        + "\n"
    )


def test_flags_and_config_share_one_validation(tree):
    (tree / ".mps-migrate.toml").write_text('ignore = ["MPS999"]\n')
    from_file = run_cli("lint", str(tree)).stderr
    from_flag = run_cli("lint", str(MINI), "--ignore", "MPS999").stderr
    assert from_file.endswith("ignore: unknown rule code or prefix 'MPS999'\n")
    assert from_flag.endswith("--ignore: unknown rule code or prefix 'MPS999'\n")


def test_lintrunner_adapter_reports_a_typo_as_a_failure_message():
    p = run_cli("lintrunner", "--ignore", "MPS999", str(CLEAN_FILE))
    (m,) = [json.loads(line) for line in p.stdout.splitlines()]
    assert p.returncode == 0 and m["path"] is None and "'MPS999'" in m["description"]


# ------------------------------------------------ summary, clean lint, --fail-on
def expected_summary(found: list[dict], fail_on: str = "warning") -> str:
    sev = Counter(f["severity"] for f in found)
    parts = [
        f"{sev[s]} {s}{'s' if sev[s] != 1 and s != 'advice' else ''}" for s in ("error", "warning", "advice") if sev[s]
    ]
    lines = [f"Found {len(found)} finding{'s' if len(found) != 1 else ''}: " + ", ".join(parts) + "."]
    safe = sum(1 for f in found if f["fix"] and f["fix"]["safe"])
    unsafe = sum(1 for f in found if f["fix"] and not f["fix"]["safe"])
    if safe and unsafe:
        lines.append(f"[*] {safe} fixable with --fix; {unsafe} more with --fix --unsafe-fixes.")
    elif safe:
        lines.append(f"[*] {safe} fixable with --fix.")
    rank = ["advice", "warning", "error"]
    if not any(rank.index(f["severity"]) >= rank.index(fail_on) for f in found):
        lines.append(f"None is at or above --fail-on {fail_on}: exit 0.")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("fmt", ["full", "concise"])
def test_summary_ends_the_human_formats(fmt):
    found = lint_json(MINI)
    assert Counter(f["severity"] for f in found) == {"error": 6, "warning": 15, "advice": 4}
    p = run_cli("lint", str(MINI), "--format", fmt)
    assert p.returncode == 1 and p.stdout.endswith("\n" + expected_summary(found)), p.stdout[-400:]
    assert (
        "Found 25 findings: 6 errors, 15 warnings, 4 advice.\n[*] 7 fixable with --fix; 5 more with --fix" in p.stdout
    )


def test_summary_ends_statistics():
    p = run_cli("lint", str(MINI), "--statistics")
    assert p.stdout.endswith("\n" + expected_summary(lint_json(MINI)))


@pytest.mark.parametrize("fmt", ["json", "json-lines", "sarif", "github"])
def test_machine_formats_keep_stdout_clean_and_summarise_on_stderr(fmt):
    p = run_cli("lint", str(MINI), "--format", fmt)
    assert "Found 25 findings" not in p.stdout and p.stderr == expected_summary(lint_json(MINI))
    if fmt in ("json", "sarif"):
        json.loads(p.stdout)
    elif fmt == "json-lines":
        assert len([json.loads(x) for x in p.stdout.splitlines()]) == 25


def test_lintrunner_format_prints_no_summary():
    p = run_cli("lint", str(MINI), "--format", "lintrunner")
    assert p.returncode == 0 and p.stderr == ""


def test_clean_lint_says_so():
    p = run_cli("lint", str(CLEAN_FILE))
    assert p.returncode == 0 and p.stdout == "All checks passed.\n"


def test_advice_alone_exits_zero_and_fail_on_moves_the_bar():
    advice = run_cli("lint", str(MINI), "--select", "MPS002")  # the inventory: advice
    assert advice.returncode == 0 and advice.stdout.endswith("None is at or above --fail-on warning: exit 0.\n")
    assert run_cli("lint", str(MINI), "--select", "MPS002", "--fail-on", "advice").returncode == 1
    assert run_cli("lint", str(MINI), "--select", "MPS008", "--fail-on", "error").returncode == 0  # warnings
    assert run_cli("lint", str(MINI), "--select", "MPS008").returncode == 1
    assert run_cli("lint", str(MINI), "--select", "MPS003", "--fail-on", "error").returncode == 1
    bad = run_cli("lint", str(MINI), "--fail-on", "notice")
    assert bad.returncode == 2 and "--fail-on" in bad.stderr


def test_fix_leaving_only_advice_exits_zero(tree):
    p = run_cli("lint", str(tree), "--fix", "--select", "MPS002,MPS001")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr == "mps-migrate: applied 1 fix in 1 file(s)\n"  # copysign's MPS001/MPS002 route
    assert p.stdout.endswith("\nFound 2 findings: 2 advice.\nNone is at or above --fail-on warning: exit 0.\n")


# ------------------------------------------------ nothing to fix; -o says what it wrote
def test_fix_diff_with_nothing_to_do_says_so():
    p = run_cli("fix", "exp2", "--root", str(MINI), "--diff")
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "mps-migrate: nothing to fix for exp2\n"


def test_fix_with_nothing_to_do_says_so(tree):
    p = run_cli("fix", "exp2", "--root", str(tree))
    assert "mps-migrate: nothing to fix for exp2\n" in p.stderr
    assert [
        x
        for x in (tree / YAML, tree / OPS / "UnaryOps.mm")
        if x.read_bytes() != (MINI / x.relative_to(tree)).read_bytes()
    ] == []


def test_lint_diff_with_nothing_to_do_says_so():
    p = run_cli("lint", str(FIXTURES / "precommit" / "tree"), "--diff")
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "mps-migrate: nothing to fix\n"


def test_output_file_is_announced(tmp_path):
    out = tmp_path / "mps.sarif"
    p = run_cli("lint", str(MINI), "--format", "sarif", "-o", str(out))
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.startswith(f"mps-migrate: wrote 25 finding(s) (sarif) to {out}\nFound 25 findings")
    assert len(json.loads(out.read_text())["runs"][0]["results"]) == 25
    diff = tmp_path / "fix.diff"
    p = run_cli("fix", "copysign", "--root", str(MINI), "--diff", "-o", str(diff))
    assert p.returncode == 1 and f"mps-migrate: wrote a diff of 2 file(s) to {diff}\n" in p.stderr
    assert diff.read_text().startswith("--- a/")
    status = tmp_path / "status.md"
    p = run_cli("status", "--root", str(MINI), "--format", "markdown", "-o", str(status))
    assert p.returncode == 0 and p.stderr == f"mps-migrate: wrote the markdown status to {status}\n"
    assert status.read_text().startswith("## MPS migration status")


def test_output_into_a_missing_folder_is_one_line_error(tmp_path):
    out = tmp_path / "nope" / "mps.sarif"
    p = run_cli("lint", str(MINI), "--format", "sarif", "-o", str(out))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and str(out) in p.stderr and "Traceback" not in p.stderr
    assert not out.parent.exists()


# ------------------------------------------------ baselines
def _insert_function(path, body: str) -> None:
    text = path.read_text()
    end = text.rindex("} // namespace")
    path.write_text(text[:end] + body + text[end:])


def test_baseline_hides_known_findings_across_line_shifts(tree, tmp_path):
    base = tmp_path / "baseline.json"
    w = run_cli("lint", str(tree), "--write-baseline", str(base))
    assert w.returncode == 0 and w.stderr == f"mps-migrate: wrote a baseline of 25 finding(s) to {base}\n"
    entries = json.loads(base.read_text())["findings"]
    assert len(entries) == 25 and all(set(e) == {"code", "path", "message", "source"} for e in entries)
    p = run_cli("lint", str(tree), "--baseline", str(base))
    assert p.returncode == 0 and p.stdout == "All checks passed. (25 known findings not shown)\n"
    # every line of two files moves down: the known findings stay known
    for rel in (YAML, f"{OPS}/HistogramKernel.mm"):
        f = tree / rel
        f.write_text(("# " if rel == YAML else "// ") + "a new first line\n\n" + f.read_text())
    assert run_cli("lint", str(tree), "--baseline", str(base)).returncode == 0
    _insert_function(
        tree / OPS / "HistogramKernel.mm",
        "uint32_t count_of(const Tensor& t) {\n  uint32_t n = t.numel();\n  return n;\n}\n",
    )
    p = run_cli("lint", str(tree), "--baseline", str(base), "--format", "concise")
    assert p.returncode == 1 and len(p.stdout.splitlines()) == 2, p.stdout
    assert " MPS013 uint32_t n = t.numel();" in p.stdout.splitlines()[0]
    assert p.stdout.splitlines()[1] == "Found 1 finding: 1 warning. (25 known findings not shown)"


def test_a_second_identical_finding_is_new(tree, tmp_path):
    base = tmp_path / "baseline.json"
    hist = tree / OPS / "HistogramKernel.mm"
    _insert_function(hist, "uint32_t a_of(const Tensor& t) {\n  uint32_t n = t.numel();\n  return n;\n}\n")
    run_cli("lint", str(tree), "--write-baseline", str(base))
    _insert_function(hist, "uint32_t b_of(const Tensor& t) {\n  uint32_t n = t.numel();\n  return n;\n}\n")
    found = lint_json(tree, "--baseline", str(base))
    assert [(f["code"], f["path"]) for f in found] == [("MPS013", f"{OPS}/HistogramKernel.mm")]


def test_bad_baseline_is_one_line_error(tmp_path):
    bad = tmp_path / "b.json"
    for text in ("{", '{"findings": []}', '{"mps-migrate-baseline": 1, "findings": [{"code": "MPS001"}]}'):
        bad.write_text(text)
        p = run_cli("lint", str(MINI), "--baseline", str(bad))
        assert (
            p.returncode == 2 and p.stderr.count("\n") == 1 and str(bad) in p.stderr and "invalid baseline" in p.stderr
        )
    p = run_cli("lint", str(MINI), "--baseline", str(tmp_path / "missing.json"))
    assert p.returncode == 2 and "cannot read the baseline" in p.stderr


# ------------------------------------------------ --since REV
def _git(root, *args):
    env = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    p = subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        capture_output=True,
        text=True,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    return p


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@needs_git
def test_since_fixes_only_what_the_change_brings(tree):
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-q", "-m", "base")
    ops = tree / OPS / "UnaryOps.mm"
    before = ops.read_text()
    stale = "#include <ATen/ops/atan2_native.h>\n"
    assert stale not in before
    ops.write_text(before.replace("#include", stale + "#include", 1))  # a stale include the change brings
    legacy = lint_json(tree, "--select", "MPS005")
    assert len([f for f in legacy if f["path"] == f"{OPS}/UnaryOps.mm"]) == 2  # exp_native.h (old) and the new one
    p = run_cli("lint", str(ops), "--since", "HEAD", "--fix", "--select", "MPS005")
    assert p.returncode == 0 and "applied 1 fix in 1 file(s)" in p.stderr, p.stdout + p.stderr
    assert ops.read_text() == before  # the old stale include is still there
    assert run_cli("lint", str(ops), "--select", "MPS005").returncode == 1


@needs_git
def test_since_in_a_repository_without_commits_reports_everything(tree):
    _git(tree, "init", "-q")
    assert lint_json(tree, "--since", "HEAD") == lint_json(tree)


def test_since_outside_git_or_bad_revision_is_one_line_error(tree):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    p = run_cli("lint", str(tree), "--since", "HEAD")
    assert (
        p.returncode == 2 and p.stderr.count("\n") == 1 and "--since HEAD" in p.stderr and "Traceback" not in p.stderr
    )
    _git(tree, "init", "-q")
    p = run_cli("lint", str(tree), "--since", "no-such-rev")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--since no-such-rev" in p.stderr


# ------------------------------------------------ a bug of the tool: one line and exit 3, never a traceback
def test_an_internal_error_is_one_line_naming_where_and_exit_3(monkeypatch, capsys):
    import migrate.lint
    from migrate.cli import main

    def broken(*args, **kwargs):
        return {}["no such key"]

    monkeypatch.setattr(migrate.lint, "lint_root", broken)
    monkeypatch.setenv("MPS_MIGRATE_NO_CACHE", "1")
    monkeypatch.delenv("MPS_MIGRATE_DEBUG", raising=False)
    from migrate import cache

    with cache.disable_cache():
        assert main(["lint", str(MINI)]) == 3
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        # the innermost frame of mps-migrate itself (``broken`` is this test's)
        assert re.fullmatch(
            r"mps-migrate: internal error: KeyError: 'no such key' at migrate/result_cache\.py:\d+ in lint_findings;"
            r" please report it with the command that failed \(MPS_MIGRATE_DEBUG=1 prints the traceback\)\n",
            err,
        )
        monkeypatch.setenv("MPS_MIGRATE_DEBUG", "1")
        with pytest.raises(KeyError):
            main(["lint", str(MINI)])

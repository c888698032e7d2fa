"""CLI behaviour: subcommands, formats, selection, configuration, bad input, exit codes."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.helpers import MINI, OPS, YAML, lint_json, run_cli, triples


@pytest.fixture()
def tree(tmp_path):
    dst = tmp_path / "tree"
    shutil.copytree(MINI, dst)
    return dst


def test_rule_prints_documentation():
    p = run_cli("rule", "MPS001")
    assert p.returncode == 0
    for part in (
        "MPS001",
        "half-migrated-family",
        "## What it does",
        "## Why it matters",
        "## Example",
        "fix safety: mixed",
    ):
        assert part in p.stdout


def test_rule_all_lists_every_rule():
    p = run_cli("rule", "--all")
    codes = [line.split()[0] for line in p.stdout.splitlines() if not line.startswith(" ")]
    assert codes == [f"MPS{n:03d}" for n in range(1, 24)] + ["MPS900"]


@pytest.mark.parametrize("columns", ["100", "160", "200"])
def test_rule_all_wraps_whole_sentences(columns):
    """rule --all used to cut each description at the end of its first yaml line, mid-sentence."""
    import os
    import subprocess
    import sys

    from migrate.registry import all_rules

    p = subprocess.run(
        [sys.executable, "-m", "migrate", "rule", "--all"],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS=columns),
    )
    assert max(len(line) for line in p.stdout.splitlines()) <= int(columns)
    entries = re.split(r"\n(?=MPS\d)", p.stdout.strip())
    for entry, rule in zip(entries, all_rules().values(), strict=True):
        text = " ".join(entry.split()[3:])
        assert text.endswith(".") and " ".join(rule.doc.summary.split()).startswith(text), (entry, rule.doc.summary)


def test_unknown_rule_is_one_line_error():
    p = run_cli("rule", "MPS999")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "unknown rule" in p.stderr


def test_path_outside_tree(tmp_path):
    p = run_cli("lint", str(tmp_path))
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "not inside a PyTorch tree" in p.stderr and str(tmp_path) in p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("command", ["fix", "port", "explain", "verify"])
def test_a_tree_given_for_the_operator_is_named_in_the_error(tmp_path, command):
    """`mps-migrate fix TREE` outside a tree: the error says where the tree goes, in one line."""
    p = run_cli(command, str(MINI), cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert "not inside a PyTorch tree" in p.stderr
    assert f"give it as --root, after the operator (mps-migrate {command} OP --root {MINI})" in p.stderr


@pytest.mark.parametrize("args", [("fix", "atan2"), ("explain",), ("port",)])
def test_an_operator_name_outside_a_tree_gets_no_root_hint(tmp_path, args):
    p = run_cli(*args, cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "not inside a PyTorch tree" in p.stderr
    assert "--root" not in p.stderr and "internal error" not in p.stderr


def test_missing_path(tmp_path):
    p = run_cli("lint", str(tmp_path / "nope"))
    assert p.returncode == 2 and "no such file" in p.stderr


def test_exit_codes(tree):
    assert run_cli("lint", str(tree)).returncode == 1
    assert run_cli("lint", str(tree), "--select", "MPS014", "--ignore", "MPS014").returncode == 0
    assert run_cli("lint", str(tree), "--exit-zero").returncode == 0


def test_python_m_and_script_agree():
    a = run_cli("lint", str(MINI), "--format", "concise")
    import sys
    from pathlib import Path

    exe = shutil.which("mps-migrate", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("mps-migrate entry point not installed in this environment")
    import subprocess

    b = subprocess.run([exe, "lint", str(MINI), "--format", "concise"], capture_output=True, text=True)
    assert a.stdout == b.stdout and a.returncode == b.returncode == 1


def test_select_and_ignore_by_prefix(tree):
    only = lint_json(tree, "--select", "MPS00")
    assert {f["code"] for f in only} <= {f"MPS00{n}" for n in range(10)}
    assert any(f["code"] == "MPS001" for f in only)
    none = lint_json(tree, "--ignore", "MPS0")
    assert none == []
    no2 = lint_json(tree, "--ignore", "MPS002,MPS009")
    assert not {f["code"] for f in no2} & {"MPS002", "MPS009"}


def test_paths_restrict_report(tree):
    file_only = lint_json(tree / OPS / "HistogramKernel.mm")
    assert {f["path"] for f in file_only} == {f"{OPS}/HistogramKernel.mm"}
    assert {f["code"] for f in file_only} == {"MPS011", "MPS012", "MPS013", "MPS014"}


def test_config_file_select_severity_per_file(tree):
    (tree / ".mps-migrate.toml").write_text(
        'ignore = ["MPS002"]\n'
        '[severity]\nMPS014 = "error"\n'
        '[per-file-ignores]\n"aten/src/ATen/native/mps/operations/Unary*.mm" = ["MPS004", "MPS005"]\n'
    )
    found = lint_json(tree)
    assert not any(f["code"] == "MPS002" for f in found)
    assert next(f for f in found if f["code"] == "MPS014")["severity"] == "error"
    assert not any(f["path"].endswith("UnaryOps.mm") for f in found)
    assert any(f["path"].endswith("BinaryOps.mm") and f["code"] == "MPS004" for f in found)
    # CLI flags win over the file
    again = lint_json(tree, "--ignore", "MPS014")
    assert any(f["code"] == "MPS002" for f in again) and not any(f["code"] == "MPS014" for f in again)


def test_pyproject_config(tree):
    (tree / "pyproject.toml").write_text('[tool.other]\nx = 1\n[tool.mps-migrate]\nselect = ["MPS003"]\n')
    assert {f["code"] for f in lint_json(tree)} == {"MPS003"}


def test_bad_config_is_one_line_error(tree):
    (tree / ".mps-migrate.toml").write_text('select = ["XYZ1"]\n')
    p = run_cli("lint", str(tree))
    assert p.returncode == 2 and ".mps-migrate.toml" in p.stderr and "XYZ1" in p.stderr
    (tree / ".mps-migrate.toml").write_text("select = [\n")
    p = run_cli("lint", str(tree))
    assert p.returncode == 2 and "invalid TOML" in p.stderr and "Traceback" not in p.stderr


def test_full_format_shows_source_and_caret():
    p = run_cli("lint", str(MINI), "--select", "MPS003")
    lines = p.stdout.splitlines()
    assert lines[0].endswith(
        "native_functions.yaml:57:10: MPS003 erfinv.out names MPS kernel erfinv_out_mps, which is defined nowhere in the tree"
    )
    assert "MPS: erfinv_out_mps" in lines[1]
    assert lines[2].strip(" |") == "^" * len("erfinv_out_mps")


def test_github_format():
    p = run_cli("lint", str(MINI), "--format", "github", "--select", "MPS006")
    assert p.stdout.startswith("::error title=mps-migrate (MPS006),file=")
    assert ",line=64," in p.stdout


def test_sarif_format():
    p = run_cli("lint", str(MINI), "--format", "sarif")
    doc = json.loads(p.stdout)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert all(run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"] for r in run["results"])
    assert "MPS001" in ids
    fixed = [r for r in run["results"] if "fixes" in r]
    assert fixed and fixed[0]["fixes"][0]["artifactChanges"][0]["replacements"]


def test_lintrunner_format_whole_file_fix():
    p = run_cli("lint", str(MINI), "--format", "lintrunner")
    assert p.returncode == 0
    msgs = [json.loads(line) for line in p.stdout.splitlines()]
    for m in msgs:
        assert set(m) == {"path", "line", "char", "code", "severity", "name", "original", "replacement", "description"}
        assert m["code"] == "MPSMIGRATE" and m["severity"] in ("error", "warning", "advice")
    with_fix = [m for m in msgs if m["replacement"] is not None]
    assert with_fix
    m = next(m for m in with_fix if m["path"].endswith("BinaryOps.mm"))
    assert m["original"] == (MINI / OPS / "BinaryOps.mm").read_text()
    assert "atan2_out_mps" not in m["replacement"] and "hypot_out_mps" in m["replacement"]


def test_json_lines_and_statistics():
    p = run_cli("lint", str(MINI), "--format", "json-lines")
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(rows) == len(lint_json(MINI))
    s = run_cli("lint", str(MINI), "--statistics")
    table, summary = s.stdout.split("Found ")
    counts = {line.split()[1]: int(line.split()[0]) for line in table.splitlines()}
    assert counts["MPS002"] == 3 and counts["MPS004"] == 2
    assert summary.startswith(f"{sum(counts.values())} findings: ")


def test_explain_family_json():
    p = run_cli("explain", "atan2", "--root", str(MINI), "--format", "json")
    routes = {r["overload"]: r for r in json.loads(p.stdout)}
    assert set(routes) == {"atan2.out", "atan2_", "atan2"}
    assert routes["atan2.out"]["via"] == "explicit" and routes["atan2.out"]["impl"] == "metal"
    assert routes["atan2.out"]["defined_at"] == f"{OPS}/BinaryKernel.mm:14"
    assert routes["atan2"]["via"] == "delegate:atan2.out" and routes["atan2"]["impl"] == "metal"


def test_explain_all_fields():
    p = run_cli("explain", "--all", "--root", str(MINI), "--format", "json")
    routes = {r["overload"]: r for r in json.loads(p.stdout)}
    for r in routes.values():
        assert {"overload", "kernel", "via", "impl", "defined_at"} <= set(r)
    assert routes["logit"]["via"] == "composite" and routes["logit"]["impl"] == "delegating"
    assert routes["hypot.out"]["impl"] == "mpsgraph" and routes["hypot"]["via"] == "delegate:hypot.out"
    assert routes["erfinv.out"]["impl"] == "undefined"
    assert routes["histc"]["impl"] == "metal"
    assert routes["copysign.Scalar_out"]["impl"] == "mpsgraph"


def test_explain_text_shows_hops():
    p = run_cli("explain", "exp", "--root", str(MINI / OPS))
    assert p.returncode == 0
    assert "REGISTER_DISPATCH(exp_stub, exp_kernel_mps)" in p.stdout


def test_explain_unknown_op():
    p = run_cli("explain", "nosuchop", "--root", str(MINI))
    assert p.returncode == 2 and "no operator 'nosuchop'" in p.stderr


def test_malformed_yaml_is_a_finding_and_rest_still_linted(tree):
    y = tree / YAML
    text = y.read_text().replace("    MPS: hypot_out_mps\n", "    MPS hypot_out_mps\n")
    y.write_text(text)
    found = lint_json(tree)
    errs = [f for f in found if f["code"] == "MPS900"]
    assert errs and errs[0]["path"] == YAML and errs[0]["line"] == 44
    assert ("MPS004", f"{OPS}/BinaryOps.mm", 75) in triples(found)


def test_non_utf8_host_file(tree):
    f = tree / OPS / "Activation.mm"
    f.write_bytes(f.read_bytes().replace(b"// Activation", b"// Activ\xff\xfeation"))
    p = run_cli("lint", str(tree), "--format", "json")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    found = json.loads(p.stdout)
    assert any(x["code"] == "MPS900" and x["path"].endswith("Activation.mm") and x["line"] == 1 for x in found)
    assert any(x["code"] == "MPS007" for x in found)


def test_unreadable_file(tree):
    (tree / OPS / "Broken.mm").symlink_to(tree / "does-not-exist.mm")
    found = lint_json(tree)
    err = [x for x in found if x["code"] == "MPS900" and x["path"].endswith("Broken.mm")]
    assert err and "cannot read" in err[0]["message"]


def test_half_migrated_family_reported_from_any_of_its_files(tree):
    # MPS001 sits on the yaml line; it is reported whichever file of the family is given
    for rel in (f"{OPS}/BinaryOps.mm", f"{OPS}/BinaryKernel.mm", "aten/src/ATen/native/mps/kernels/BinaryKernel.metal"):
        found = lint_json(tree / rel)
        assert [f["overload"] for f in found if f["code"] == "MPS001"] == ["copysign.Scalar_out"], rel
    assert not [f for f in lint_json(tree / OPS / "UnaryKernel.mm") if f["code"] == "MPS001"]

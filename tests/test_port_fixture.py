"""port on fixtures/port (families in the real 2.x shapes): the patch, lint afterwards, refusals, --list."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pytest

from migrate.cli import main
from migrate.lint import lint_tree
from migrate.tree import load_tree
from tests.helpers import FIXTURES, KERNELS, OPS, YAML, new_after_port, run_cli

PORT = FIXTURES / "port"
FAMILY_CODES = {f"MPS00{n}" for n in range(1, 10)}
# family -> (kernel file, host file, impl file, overloads rerouted)
PORTS = {
    "atan2": ("BinaryKernel", "BinaryKernel", "BinaryOps", ["atan2.out"]),
    "hypot": ("BinaryKernel", "BinaryKernel", "BinaryOps", ["hypot.out"]),
    "logaddexp": ("BinaryKernel", "BinaryKernel", "BinaryOps", ["logaddexp.out"]),
    "lt": ("BinaryKernel", "BinaryKernel", "BinaryOps", ["lt.Scalar_out", "lt.Tensor_out"]),
    "floor": ("UnaryKernel", "UnaryKernel", "UnaryOps", ["floor.out"]),
    "hardsigmoid": ("UnaryKernel", "UnaryKernel", "Activation", ["hardsigmoid.out"]),
    "exp2": ("UnaryKernel", "UnaryKernel", "UnaryOps", ["exp2.out"]),
    "add": ("BinaryKernel", "BinaryKernel", "BinaryOps", ["add.out"]),
    "ge": ("BinaryKernel", "BinaryKernel", "BinaryOps", ["ge.Scalar_out", "ge.Tensor_out"]),
    "logical_and": ("BinaryKernel", "BinaryKernel", "BinaryOps", ["logical_and.out"]),
    "neg": ("UnaryKernel", "UnaryKernel", "UnaryOps", ["neg.out"]),
    "sqrt": ("UnaryKernel", "UnaryKernel", "UnaryOps", ["sqrt.out"]),
    "leaky_relu": ("UnaryKernel", "UnaryKernel", "Activation", ["leaky_relu.out"]),
    "softshrink": ("UnaryKernel", "UnaryKernel", "Activation", ["softshrink.out"]),
    "silu": ("UnaryKernel", "UnaryKernel", "Activation", ["silu.out"]),
    "rsqrt": ("UnaryKernel", "UnaryKernel", "UnaryOps", ["rsqrt.out"]),  # the newest macOS's branch of its #ifdef
    # div_mode_template's rounding_mode is the caller's literal "floor": specialised for it
    "remainder": ("BinaryKernel", "BinaryKernel", "BinaryOps", ["remainder.Tensor_out"]),
    # min and max: a parameter struct (migrate/port/params.py)
    "hardtanh_backward": ("BinaryKernel", "BinaryKernel", "ActivationBackward", ["hardtanh_backward.grad_input"]),
    # the shared clamp helper specialised for one present bound; the Tensor overload rides maximum/minimum_stub
    "clamp_min": ("UnaryKernel", "UnaryKernel", "TensorCompare", ["clamp_min.out", "clamp_min.Tensor_out"]),
    "clamp_max": ("UnaryKernel", "UnaryKernel", "TensorCompare", ["clamp_max.out", "clamp_max.Tensor_out"]),
    # three optional doubles: the struct's fields are the host's own expressions of them
    "nan_to_num": ("UnaryKernel", "UnaryKernel", "TensorCompare", ["nan_to_num.out"]),
}
BLOCKED = {
    "cumsum": "selector cumulativeSumWithTensor:axis:name: (scan (cumulative op)) is not elementwise",
    "mm": "selector matrixMultiplicationWithPrimaryTensor:secondaryTensor:name: (matrix op) is not elementwise",
    "hardtanh": "hardtanh.out has no CPU kernel line for MPS to share",  # its min/max translate to a struct
}


@pytest.fixture()
def tree(tmp_path) -> Path:
    dst = tmp_path / "tree"
    shutil.copytree(PORT, dst)
    return dst


def digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha1(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def port(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["port", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def findings(root: Path):
    return lint_tree(load_tree(root)).findings


def about(f, family: str) -> bool:
    if f.overload:  # leaky_relu_backward's findings are not leaky_relu's
        return f.overload.split(".")[0].rstrip("_") == family
    return (f.kernel or "") in (family, f"{family}_out_mps") or (f.kernel or "").startswith(family + "_")


@pytest.mark.parametrize("family", sorted(PORTS))
def test_port_patch_applies_and_the_family_lints_clean(tree, capsys, family):
    kernel, host, impl, overloads = PORTS[family]
    before = findings(tree)
    assert any(f.code == "MPS002" and f.overload in overloads for f in before) or family == "exp2"
    snapshot = digest(tree)

    rc, diff, _ = port(capsys, family, "--root", str(tree))
    assert rc == 0 and digest(tree) == snapshot  # a dry run writes nothing
    assert f"+++ b/{KERNELS}/{kernel}.metal" in diff and f"+++ b/{OPS}/{host}.mm" in diff
    assert f"+++ b/{YAML}" in diff and f"+++ b/{OPS}/{impl}.mm" in diff
    assert f"struct {family}_functor" in diff

    rc, _, err = port(capsys, family, "--root", str(tree), "--write")
    assert rc == 0 and f"ported {family}" in err
    after = findings(tree)
    assert not [f for f in after if f.code in FAMILY_CODES and about(f, family)]
    # nothing new anywhere else either (lines move, so compare code + message)
    assert new_after_port(before, after, [family]) == []

    # every rerouted overload shares the CPU line now; its old kernel is gone from the tree
    yaml = (tree / YAML).read_text()
    impl_text = (tree / OPS / f"{impl}.mm").read_text()
    for f in before:
        if f.code == "MPS002" and f.overload in overloads:
            # (a shared helper's string switch may still name it: `op_name != "remainder_out_mps"` for div)
            assert not re.search(rf"\b{f.kernel}\b", yaml) and not re.search(rf'(?<![\w"]){f.kernel}\b(?!")', impl_text)
    assert f"<ATen/ops/{family}_native.h>" not in impl_text

    # a second port is a clear no-op
    snapshot = digest(tree)
    rc, out, err = port(capsys, family, "--root", str(tree))
    assert rc == 0 and out == "" and "nothing to port" in err and digest(tree) == snapshot


def test_reroute_only_when_functor_and_stub_exist(tree, capsys):
    rc, diff, err = port(capsys, "copysign", "--root", str(tree), "--write")
    assert rc == 0 and "only rerouting" in err
    yaml = (tree / YAML).read_text()
    assert "CPU, CUDA, MPS: copysign_scalar_out" in yaml and "copysign_scalar_out_mps" not in yaml
    assert not [f for f in findings(tree) if f.code in FAMILY_CODES and about(f, "copysign")]


def test_ports_compose(tree, capsys):
    for family in PORTS:
        assert port(capsys, family, "--root", str(tree), "--write")[0] == 0
    left = {f.overload for f in findings(tree) if f.code == "MPS002"}
    # not in PORTS: sign, frac, mish, the activation backwards and sub (after add) are ported and verified in
    # tests/test_port_modern_verify.py
    assert left == {
        "copysign.Scalar_out",
        "hardtanh.out",
        "cumsum.out",
        "mm.out",
        "sign.out",
        "frac.out",
        "mish.out",
        "leaky_relu_backward.grad_input",
        "mish_backward",
        "softplus_backward.grad_input",
        "sub.out",
        "div.out",  # one kernel per stub: tests/test_port_multi_stub.py
        "div.out_mode",
        "clamp.out",  # after clamp_min and clamp_max: tests/test_port_ternary.py
        "clamp.Tensor_out",
    }


@pytest.mark.parametrize("family", sorted(BLOCKED))
def test_blocked_family_names_the_construct(tree, capsys, family):
    snapshot = digest(tree)
    rc, out, err = port(capsys, family, "--root", str(tree), "--write")
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and BLOCKED[family] in err and f"cannot port {family}" in err
    assert "--skeleton writes a hand-completion skeleton" in err
    assert digest(tree) == snapshot


def test_unknown_family_is_a_usage_error(capsys):
    rc, _, err = port(capsys, "no_such_op", "--root", str(PORT))
    assert rc == 2 and "unknown operator family 'no_such_op'" in err


def test_list_shows_every_mpsgraph_family(capsys):
    rc, out, _ = port(capsys, "--list", "--root", str(PORT))
    assert rc == 0
    table = out.split("MPSGraph-routed families")[0].splitlines()[:-1]  # wrapped details continue indented
    rows = {line.split()[0]: line.split()[1] for line in table if not line.startswith(" ")}
    assert max(map(len, out.splitlines())) <= 160
    more = {
        f: "portable"
        for f in ("sign", "frac", "mish", "mish_backward", "softplus_backward", "leaky_relu_backward", "div")
    }  # verified in tests/test_port_modern_verify.py and (div) tests/test_port_multi_stub.py
    assert rows == {
        **{f: "portable" for f in PORTS},
        "copysign": "portable",
        **{f: "blocked" for f in BLOCKED},
        "hardtanh": "translatable",
        "sub": "translatable",
        "clamp": "blocked",  # waits for clamp_max and clamp_min (tests/test_port_ternary.py)
        **more,
    }
    assert "34 MPSGraph-routed families: 29 portable, 2 translatable" in out and "3 blocked" in out
    assert "cumulativeSumWithTensor:axis:name:" in out


def test_list_json_and_cli_subprocess():
    p = run_cli("port", "--list", "--root", str(PORT), "--format", "json")
    assert p.returncode == 0, p.stderr
    import json

    rows = {r["family"]: r for r in json.loads(p.stdout)}
    assert rows["lt"]["overloads"] == ["lt.Scalar_out", "lt.Tensor_out"]
    assert rows["hardtanh"]["construct"] == "no shared kernel"


def test_pre_c10_metal_tree_is_translatable_but_blocked(tree, capsys):
    """A tree whose kernel files predate c10/metal (2.6.0 shape): the graph translates, the patch cannot."""
    k = tree / KERNELS / "BinaryKernel.metal"
    k.write_text("#include <metal_stdlib>\nusing namespace metal;\n")
    rc, _, err = port(capsys, "logaddexp", "--root", str(tree))
    assert rc == 2 and err.count("\n") == 1
    # neither a c10/metal functor registry nor a macro exporting the names binary_mps_impl builds (2.7 style)
    assert f"{KERNELS}/BinaryKernel.metal defines no (NAME, DTYPE) macro registering the kernels binary_mps_impl" in err
    assert "--skeleton" not in err  # a skeleton would not help
    rc, out, _ = port(capsys, "--list", "--root", str(tree))
    assert any(line.startswith("logaddexp") and "translatable" in line for line in out.splitlines())

"""port: the generated functors compile (CPU Metal backend) and match the torch reference of the
MPSGraph code they replace (after the idiom table's torch-faithful rewrites), dtype by dtype."""

from __future__ import annotations

import shutil

import pytest
import torch

from migrate.cli import main
from migrate.index import Index
from migrate.port.dag import evaluate_with_torch
from migrate.port.idioms import apply as apply_idioms
from migrate.port.locate import family_impls, graph_dag
from migrate.port.patch import plan_port
from migrate.tree import load_tree
from tests.device.indexing_host import METAL, ilp_threads
from tests.helpers import FIXTURES, compile_kernel_files

FAMILIES = (
    "atan2",
    "hypot",
    "logaddexp",
    "lt",
    "floor",
    "hardsigmoid",
    "exp2",
    "ge",
    "logical_and",
    "neg",
    "sqrt",
    "silu",
)
FLOATS = (torch.float32, torch.float16, torch.bfloat16)
INTS = (torch.int32, torch.int64, torch.uint8, torch.bool)
TOL = {torch.float32: (2e-6, 1e-6), torch.float16: (4e-3, 2e-3), torch.bfloat16: (3e-2, 2e-2)}
SCALE = {"logaddexp": 4.0, "hypot": 4.0, "hardsigmoid": 5.0, "floor": 10.0, "exp2": 4.0, "atan2": 2.0, "lt": 1.0}


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """The DAGs and dtype plans read from fixtures/port, and the kernel libraries after porting them all."""
    root = tmp_path_factory.mktemp("ported") / "tree"
    shutil.copytree(FIXTURES / "port", root)
    ix = Index(load_tree(root))
    info = {}
    for fam in FAMILIES:
        p = plan_port(ix, fam)
        # the formula port emits: the old graph with rules/port_idioms.yaml's torch-faithful rewrites
        dag = apply_idioms(graph_dag(ix, family_impls(ix, fam)[0].function), fam, root)[0]
        info[fam] = (dag, p.plan.pairs(), p.arity)
    for fam in FAMILIES:
        assert main(["port", fam, "--root", str(root), "--write"]) == 0
    libs = compile_kernel_files(root, tmp_path_factory.mktemp("cache"))
    return info, libs


def make(dtype, n, family, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, (n,), generator=g).bool()
    if not dtype.is_floating_point:
        lo = 0 if dtype == torch.uint8 else -20
        return torch.randint(lo, 20, (n,), generator=g, dtype=dtype)
    x = torch.randn(n, generator=g) * SCALE.get(family, 3.0)
    x[0] = float("nan")
    x[1] = 0.0
    return x.to(dtype)


CASES = [(f, d) for f in FAMILIES for d in FLOATS + INTS]


def check_functor(lib, family, dag, pairs, dtype, n=301):
    """Run ``family``'s dense kernel for ``dtype`` and compare with the MPSGraph reference."""
    registered = dict(pairs)
    t = METAL[dtype]
    arity = len(dag.inputs)
    inputs = [make(dtype, n, family, seed) for seed in range(arity)]
    if t not in registered:  # left out only because the CPU operator refuses the dtype
        with pytest.raises((RuntimeError, NotImplementedError)):
            getattr(torch.ops.aten, family)(*inputs)
        return
    out_t = registered[t]
    out_dtype = next(d for d, name in METAL.items() if name == out_t)
    if arity == 2:
        inputs[1][5:40] = inputs[0][5:40]  # equal operands
    out = torch.empty(n, dtype=out_dtype)
    kernel = getattr(lib, f"{family}_dense_{out_t}_{t}")
    if arity == 1:
        kernel(out, inputs[0], n, threads=[ilp_threads(n)], group_size=[64])
    else:
        kernel(out, *inputs, threads=[n], group_size=[64])
    named = {node.name: x for node, x in zip(dag.inputs, inputs)}
    ref = evaluate_with_torch(dag, named, out_dtype=out_dtype)  # op by op in the input dtype, as MPSGraph
    assert ref.dtype == out.dtype
    if not out_dtype.is_floating_point:
        assert torch.equal(out, ref)
        return
    rtol, atol = TOL[dtype] if dtype in TOL else TOL[torch.float32]
    # the functor computes half/bfloat in float and rounds once; MPSGraph rounded every op to the
    # input dtype: they agree within a few ulps of the operands' magnitude, except where MPSGraph's
    # intermediate overflowed (inf); against the float-computed reference they agree tightly
    finite = torch.isfinite(ref) | torch.isnan(ref) & torch.isnan(out)
    if dtype in (torch.float16, torch.bfloat16):
        scale = max(float(x.float().nan_to_num().abs().max()) for x in inputs)
        atol = max(atol, 2 * torch.finfo(dtype).eps * scale)
    torch.testing.assert_close(out[finite], ref[finite], rtol=rtol, atol=atol, equal_nan=True)
    atol = TOL[dtype][1] if dtype in TOL else TOL[torch.float32][1]
    wide = evaluate_with_torch(dag, named, out_dtype=out_dtype, opmath=True)
    torch.testing.assert_close(out, wide, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("family, dtype", CASES, ids=[f"{f}-{METAL[d]}" for f, d in CASES])
def test_functor_matches_the_mpsgraph_reference(ported, family, dtype):
    (dag, pairs, arity), libs = ported[0][family], ported[1]
    check_functor(libs["UnaryKernel" if arity == 1 else "BinaryKernel"], family, dag, pairs, dtype)


def test_registrations_cover_what_the_cpu_operator_takes(ported):
    info = ported[0]
    assert dict(info["atan2"][1])["long"] == "float"  # math on integers goes through float
    assert dict(info["floor"][1])["int"] == "int"  # rounding is the identity on integers
    assert dict(info["lt"][1])["half"] == "bool" and dict(info["lt"][1])["bool"] == "bool"
    assert set(dict(info["hardsigmoid"][1])) == {"float", "half", "bfloat"}  # CPU hardsigmoid refuses ints

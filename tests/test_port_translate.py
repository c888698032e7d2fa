"""port: the Objective-C reader, graph code -> DAG, the selector table, the torch reference."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import torch

from migrate.index import Index
from migrate.port import objc as o
from migrate.port.dag import Dag, Node, evaluate_with_torch
from migrate.port.locate import graph_dag
from migrate.port.rules import table
from migrate.port.translate import PortBlocked
from migrate.tree import load_tree
from tests.helpers import MINI, OPS

DATA = Path(__file__).parent / "data" / "port"


# ------------------------------------------------------------------ reader
def test_nested_sends_keyword_args_and_literals():
    body, _ = o.parse_statements(
        "MPSGraphTensor* t = [g additionWithPrimaryTensor:[g exponentWithTensor:x name:nil]\n"
        "                                 secondaryTensor:[g constantWithScalar:-2.5 shape:@[ @1 ] dataType:x.dataType]\n"
        "                                            name:nil];\nreturn t;")
    decl, ret = body
    assert isinstance(decl, o.Decl) and decl.type == "MPSGraphTensor *" and decl.name == "t"
    send = decl.init
    assert send.selector == "additionWithPrimaryTensor:secondaryTensor:name:"
    assert send.args[0].selector == "exponentWithTensor:name:"
    const = send.args[1]
    assert const.selector == "constantWithScalar:shape:dataType:"
    assert isinstance(const.args[0], o.Unary) and const.args[0].expr.value == 2.5
    assert isinstance(const.args[1], o.ArrayLit) and isinstance(const.args[2], o.Member)
    assert isinstance(ret, o.Return) and ret.line == 4


def test_blocks_lambdas_casts_and_unary_selectors():
    text = ("auto f = ^MPSGraphTensor*(MPSGraph* g, MPSGraphTensor* x) { return [g negativeWithTensor:x name:nil]; };\n"
            "h([&](auto a, auto b) { b->out = a; }, (NSInteger)dim, [x dataType]);")
    body, blocks = o.parse_statements(text)
    assert [b.lambda_ for b in blocks] == [False, True]
    assert [(p.type, p.name) for p in blocks[0].params] == [("MPSGraph*", "g"), ("MPSGraphTensor*", "x")]
    call = body[1].expr
    assert isinstance(call.args[1], o.Name) and call.args[1].id == "dim"  # the C cast is read through
    assert isinstance(call.args[2], o.Send) and call.args[2].selector == "dataType"


def test_comma_declarations_and_statement_macros():
    body, _ = o.parse_statements("MPSGraphTensor *a = nil, *b = nil;\nC10_DIAGNOSTIC_PUSH()\nreturn a;")
    assert [type(s).__name__ for s in body] == ["Decl", "Decl", "ExprStmt", "Return"]


@pytest.mark.parametrize("text, line", [("[g fooWithTensor:x name:nil", 1), ("x = ;", 1), ("a;\n{ [g f:];", 2)])
def test_syntax_errors_name_the_line(text, line):
    with pytest.raises(o.ObjcSyntaxError) as exc:
        o.parse_statements(text)
    assert exc.value.line == line


# ------------------------------------------------------------ translation
@pytest.fixture(scope="module")
def snippets(tmp_path_factory) -> Index:
    root = tmp_path_factory.mktemp("tree") / "tree"
    shutil.copytree(MINI, root)
    for f in DATA.glob("*.mm"):
        shutil.copy(f, root / OPS / f.name)
    return Index(load_tree(root))


def dag_of(ix: Index, fn: str) -> Dag:
    return graph_dag(ix, ix.functions[fn][0])


@pytest.mark.parametrize("fn, structure", [
    ("tanh_out_mps", "tanh(inputTensor)"),  # 1.x macro pasting the selector
    ("logical_not_out_mps", "logical_not(inputTensor)"),  # C++ lambda
    ("log1p_out_mps", "log(add(inputTensor, 1.0))"),  # same-file helper inlined
    ("frac_out_mps", "sub(inputTensor, select(lt(inputTensor, 0.0), ceil(inputTensor), floor(inputTensor)))"),
    ("expm1_out_mps", "sub(exp(inputTensor), 1.0)"),
    ("logical_xor_out_mps",  # selector pasted across a line continuation, casts to Bool
     "logical_xor(cast<bool>(primaryCastTensor), cast<bool>(secondaryCastTensor))"),
    ("xlogy_out_mps", "select(isnan(secondaryCastTensor), secondaryCastTensor, "
                      "select(eq(primaryCastTensor, 0.0), 0.0, mul(primaryCastTensor, log(secondaryCastTensor))))"),
    ("fmax_like_out_mps", "maximum(self, other)"),  # cached-graph lambda with two placeholders
])
def test_graph_code_becomes_a_dag(snippets, fn, structure):
    assert dag_of(snippets, fn).structure() == structure


def test_shared_nodes_stay_shared(snippets):
    d = dag_of(snippets, "frac_out_mps")
    inputs = [n for n in d.nodes() if n.op == "input"]
    assert len(inputs) == 1 and d.inputs == inputs


@pytest.mark.parametrize("fn, construct, words", [
    ("signbit_out_mps", "control flow (if)", "dataType"),
    ("norm_like_out_mps", "reductionSumWithTensor:axis:name: (reduction)", "not elementwise"),
    ("leaky_relu_out_mps", "maximumWithTensor:secondaryTensor:name:", "unknown selector"),  # the slope is alpha
])
def test_untranslatable_graph_code_says_why(snippets, fn, construct, words):
    with pytest.raises(PortBlocked) as exc:
        dag_of(snippets, fn)
    assert exc.value.construct == construct and words in exc.value.reason
    assert re.search(r"unary_eras.mm:\d+|binary_eras.mm:\d+", exc.value.where)


# ---------------------------------------------------------------- table
def test_table_covers_the_elementwise_selectors():
    t = table()
    assert len(t.ops) >= 60
    assert len(t.by_selector) == len(t.ops)  # one op per selector
    classes = {r.cls for r in t.ops.values()}
    assert classes == {"math", "arith", "round", "predicate", "logical", "bitwise", "select", "clamp"}
    for r in t.ops.values():
        want = {str(i) for i in range(r.arity)}
        if r.metal is not None:
            assert set(re.findall(r"\{(\d)\}", r.metal)) == want, r.op
        if r.metal_int is not None:  # an integer form may be a constant (isnan -> false)
            assert set(re.findall(r"\{(\d)\}", r.metal_int)) <= want, r.op
        assert r.metal is not None or r.cls == "bitwise"


def _sample(rule, dtype):
    g = torch.Generator().manual_seed(3)
    if dtype == torch.bool:
        return [torch.randint(0, 2, (9,), generator=g).bool() for _ in range(rule.arity)]
    if not dtype.is_floating_point:
        return [torch.randint(1, 6, (9,), generator=g, dtype=dtype) for _ in range(rule.arity)]
    return [(torch.rand(9, generator=g) * 0.8 + 0.1).to(dtype) for _ in range(rule.arity)]


@pytest.mark.parametrize("op", sorted(table().ops))
def test_every_torch_reference_runs(op):
    rule = table().ops[op]
    inputs = [Node("input", name=f"i{k}") for k in range(rule.arity)]
    args = list(inputs)
    if rule.cls == "select":
        args[0] = Node("gt", (inputs[0], Node("const", value=0.5, like=inputs[0])))
    dag = Dag(inputs, Node(op, tuple(args)))
    dtype = torch.int32 if rule.cls == "bitwise" else torch.float32
    values = _sample(rule, dtype)
    out = evaluate_with_torch(dag, {f"i{k}": v for k, v in enumerate(values)})
    assert out.shape == (9,)
    assert (out.dtype == torch.bool) == rule.returns_bool


def test_evaluate_with_torch_follows_mpsgraph_dtypes():
    a, b = Node("input", name="a"), Node("input", name="b")
    two = Node("const", value=2.0, like=a)
    dag = Dag([a, b], Node("sqrt", (Node("add", (Node("pow", (a, two)), Node("pow", (b, two)))),)))
    x, y = torch.tensor([3.0, 5.0], dtype=torch.float16), torch.tensor([4.0, 12.0], dtype=torch.float16)
    out = evaluate_with_torch(dag, {"a": x, "b": y})
    assert out.dtype == torch.float16 and out.tolist() == [5.0, 13.0]
    # integer inputs of a float graph are cast to float first, as the legacy helpers did
    out = evaluate_with_torch(dag, {"a": torch.tensor([3, 5]), "b": torch.tensor([4, 12])})
    assert out.dtype == torch.float32 and out.tolist() == [5.0, 13.0]
    # MPSGraph clamp drops NaN, torch.clamp would keep it
    x = Node("input", name="x")
    clamp = Dag([x], Node("clamp", (x, Node("const", value=0.0, like=x), Node("const", value=6.0, like=x))))
    assert evaluate_with_torch(clamp, {"x": torch.tensor([float("nan"), 7.0, -1.0])}).tolist() == [0.0, 6.0, 0.0]

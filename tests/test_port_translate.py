"""port: the Objective-C reader, graph code -> DAG, the selector table, the torch reference."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import pytest
import torch

from migrate.index import Index
from migrate.source import objc as o
from migrate.port.dag import Dag, Node, evaluate_with_torch
from migrate.port.locate import graph_dag
from migrate.port.rules import table
from migrate.conventions.specialise import Known
from migrate.port.translate import PortBlocked, Translator
from migrate.tables import dtype_family
from migrate.tree import load_tree
from tests.helpers import MINI, OPS

DATA = Path(__file__).parent / "data" / "port"


# ------------------------------------------------------------------ reader
def test_nested_sends_keyword_args_and_literals():
    body, _ = o.parse_statements(
        "MPSGraphTensor* t = [g additionWithPrimaryTensor:[g exponentWithTensor:x name:nil]\n"
        "                                 secondaryTensor:[g constantWithScalar:-2.5 shape:@[ @1 ] dataType:x.dataType]\n"
        "                                            name:nil];\nreturn t;"
    )
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
    text = (
        "auto f = ^MPSGraphTensor*(MPSGraph* g, MPSGraphTensor* x) { return [g negativeWithTensor:x name:nil]; };\n"
        "h([&](auto a, auto b) { b->out = a; }, (NSInteger)dim, [x dataType]);"
    )
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


@pytest.mark.parametrize(
    "fn, structure",
    [
        ("tanh_out_mps", "tanh(inputTensor)"),  # 1.x macro pasting the selector
        # a branch on the input's dtype is decided at dispatch time: both arms, chosen per dtype
        (
            "signbit_out_mps",
            "if_dtype<long>(inputTensor, cast<bool>(lt(inputTensor, 0.0)), cast<bool>(signbit(inputTensor)))",
        ),
        ("logical_not_out_mps", "logical_not(inputTensor)"),  # C++ lambda
        ("log1p_out_mps", "log(add(inputTensor, 1.0))"),  # same-file helper inlined
        ("frac_out_mps", "sub(inputTensor, select(lt(inputTensor, 0.0), ceil(inputTensor), floor(inputTensor)))"),
        ("expm1_out_mps", "sub(exp(inputTensor), 1.0)"),
        (
            "logical_xor_out_mps",  # selector pasted across a line continuation, casts to Bool
            "logical_xor(cast<bool>(primaryCastTensor), cast<bool>(secondaryCastTensor))",
        ),
        (
            "xlogy_out_mps",
            "select(isnan(secondaryCastTensor), secondaryCastTensor, "
            "select(eq(primaryCastTensor, 0.0), 0.0, mul(primaryCastTensor, log(secondaryCastTensor))))",
        ),
        ("fmax_like_out_mps", "maximum(self, other)"),  # cached-graph lambda with two placeholders
    ],
)
def test_graph_code_becomes_a_dag(snippets, fn, structure):
    assert dag_of(snippets, fn).structure() == structure


def test_shared_nodes_stay_shared(snippets):
    d = dag_of(snippets, "frac_out_mps")
    inputs = [n for n in d.nodes() if n.op == "input"]
    assert len(inputs) == 1 and d.inputs == inputs


@pytest.mark.parametrize(
    "fn, construct, words",
    [
        ("norm_like_out_mps", "reductionSumWithTensor:axis:name: (reduction)", "not elementwise"),
        ("leaky_relu_out_mps", "maximumWithTensor:secondaryTensor:name:", "unknown selector"),  # the slope is alpha
    ],
)
def test_untranslatable_graph_code_says_why(snippets, fn, construct, words):
    with pytest.raises(PortBlocked) as exc:
        dag_of(snippets, fn)
    assert exc.value.construct == construct and words in exc.value.reason
    assert re.search(r"unary_eras.mm:\d+|binary_eras.mm:\d+", exc.value.where)


# ---------------------------------------------------------------- table
def test_table_covers_the_elementwise_selectors():
    t = table()
    assert len(t.ops) >= 60
    assert len(t.by_selector) == len([r for r in t.ops.values() if r.selector])  # one op per selector
    idiom_only = {r.op for r in t.ops.values() if not r.selector}  # emitted by port_idioms.yaml only
    assert idiom_only == {"log1p", "muladd", "torch_fmod", "trunc_divide", "floor_divide_int"}
    classes = {r.cls for r in t.ops.values()}
    assert classes == {"math", "arith", "round", "predicate", "logical", "bitwise", "select", "clamp"}
    for r in t.ops.values():
        want = {str(i) for i in range(r.arity)}
        if r.metal is not None:
            assert set(re.findall(r"\{(\d)\}", r.metal)) == want, r.op
        if r.metal_int is not None:  # an integer form may be a constant (isnan -> false)
            assert set(re.findall(r"\{(\d)\}", r.metal_int)) <= want, r.op
        assert r.metal is not None or r.cls == "bitwise"


nan, inf = math.nan, math.inf


def _round_half_away(x):
    return math.copysign(math.floor(abs(x) + 0.5), x)


def _fmax(a, b):
    return b if math.isnan(a) else a if math.isnan(b) else max(a, b)


def _fmin(a, b):
    return b if math.isnan(a) else a if math.isnan(b) else min(a, b)


def _maximum(a, b):
    return nan if math.isnan(a) or math.isnan(b) else max(a, b)


def _minimum(a, b):
    return nan if math.isnan(a) or math.isnan(b) else min(a, b)


# Inputs per domain: operand columns, element-wise.
_ANY = [-2.5, -1.5, -0.5, -0.0, 0.0, 0.25, 0.5, 1.5, 2.5, 3.75]
_POS = [0.25, 0.5, 1.0, 1.5, 2.5, 3.75, 10.0]
_UNIT = [-0.9, -0.5, -0.0, 0.3, 0.75]
_DOMAINS = {
    "any": [_ANY],
    "pos": [_POS],
    "unit": [_UNIT],
    "ge1": [[1.0, 1.5, 2.5, 10.0]],
    "special": [[nan, inf, -inf, 0.0, -0.0, -1.5, 2.0]],
    "pair": [[-2.5, -1.5, 0.0, 0.5, 1.5, 3.75, 2.0], [1.5, -2.0, 2.0, 0.5, -0.25, 2.5, 2.0]],
    "nonzero": [[-7.5, -2.5, 0.0, 5.5, 3.75, 7.0], [2.0, -2.0, 1.5, -1.5, 0.5, 3.0]],
    "zero_div": [[1.5, -2.0, 0.0, 3.0], [0.0, 4.0, 0.0, -1.5]],
    "nan_pair": [[nan, 1.0, nan, -0.5, 2.0], [1.0, nan, nan, 0.5, -3.0]],
    "pow": [[0.5, 2.0, 3.0, 1.5, 10.0], [2.0, -1.0, 0.5, 3.0, -0.5]],
    "bool_pair": [[0.0, 0.0, 1.5, -2.0], [0.0, 3.0, 0.0, -0.5]],
    "triple": [[-2.0, 0.5, 3.0, 1.0, 0.75], [-1.0, -1.0, 0.0, 2.0, 0.0], [1.0, 1.0, 2.0, 3.0, 0.5]],
}
# op -> (independent formula on Python numbers, domain); the formula is what the MPSGraph selector computes
REFERENCES = {
    "exp": (math.exp, "any"),
    "exp2": (lambda x: 2.0**x, "any"),
    "exp10": (lambda x: 10.0**x, "any"),
    "log": (math.log, "pos"),
    "log2": (math.log2, "pos"),
    "log10": (math.log10, "pos"),
    "log1p": (math.log1p, "pos"),
    "sqrt": (math.sqrt, "pos"),
    "rsqrt": (lambda x: 1 / math.sqrt(x), "pos"),
    "rsqrt2": (lambda x: 1 / math.sqrt(x), "pos"),
    "reciprocal": (lambda x: 1 / x, "pos"),
    "sin": (math.sin, "any"),
    "cos": (math.cos, "any"),
    "tan": (math.tan, "any"),
    "sinh": (math.sinh, "any"),
    "cosh": (math.cosh, "any"),
    "tanh": (math.tanh, "any"),
    "asin": (math.asin, "unit"),
    "acos": (math.acos, "unit"),
    "atan": (math.atan, "any"),
    "asinh": (math.asinh, "any"),
    "acosh": (math.acosh, "ge1"),
    "atanh": (math.atanh, "unit"),
    "erf": (math.erf, "any"),
    "sigmoid": (lambda x: 1 / (1 + math.exp(-x)), "any"),
    "square": (lambda x: x * x, "any"),
    "abs": (abs, "any"),
    "neg": (lambda x: -x, "any"),
    "sign": (lambda x: float((x > 0) - (x < 0)), "any"),
    "identity": (lambda x: x, "special"),
    "signbit": (lambda x: math.copysign(1.0, x) < 0, "special"),
    "ceil": (math.ceil, "any"),
    "floor": (math.floor, "any"),
    "trunc": (math.trunc, "any"),
    "round": (_round_half_away, "any"),  # MPSGraph rounds halves away from zero ...
    "rint": (round, "any"),  # ... rint to even
    "isnan": (math.isnan, "special"),
    "isinf": (math.isinf, "special"),
    "isfinite": (math.isfinite, "special"),
    "logical_not": (lambda x: not x, "special"),
    "add": (lambda a, b: a + b, "pair"),
    "sub": (lambda a, b: a - b, "pair"),
    "mul": (lambda a, b: a * b, "pair"),
    "div": (lambda a, b: a / b, "nonzero"),
    "trunc_divide": (lambda a, b: math.trunc(a / b), "nonzero"),
    "floor_divide_int": (lambda a, b: a // b, "nonzero"),  # Python's // is torch's floor division
    "div_no_nan": (lambda a, b: 0.0 if b == 0 else a / b, "zero_div"),
    "floor_mod": (lambda a, b: a - b * math.floor(a / b), "nonzero"),
    "mod": (math.fmod, "nonzero"),
    "pow": (math.pow, "pow"),
    "atan2": (math.atan2, "pair"),
    "fmax": (_fmax, "nan_pair"),
    "fmin": (_fmin, "nan_pair"),  # NaN loses ...
    "maximum": (_maximum, "nan_pair"),
    "minimum": (_minimum, "nan_pair"),  # ... NaN wins
    "maximum_int": (_maximum, "nan_pair"),
    "minimum_int": (_minimum, "nan_pair"),  # NaN wins, ints exact
    "relu": (lambda x: 0.0 if x < 0 else x, "any"),  # NaN stays
    "eq": (lambda a, b: a == b, "pair"),
    "ne": (lambda a, b: a != b, "pair"),
    "lt": (lambda a, b: a < b, "pair"),
    "le": (lambda a, b: a <= b, "pair"),
    "gt": (lambda a, b: a > b, "pair"),
    "ge": (lambda a, b: a >= b, "pair"),
    "logical_and": (lambda a, b: bool(a) and bool(b), "bool_pair"),
    "logical_or": (lambda a, b: bool(a) or bool(b), "bool_pair"),
    "logical_xor": (lambda a, b: bool(a) != bool(b), "bool_pair"),
    "logical_nand": (lambda a, b: not (a and b), "bool_pair"),
    "logical_nor": (lambda a, b: not (a or b), "bool_pair"),
    "logical_xnor": (lambda a, b: bool(a) == bool(b), "bool_pair"),
    "select": (lambda c, t, f: t if c > 0.5 else f, "triple"),  # the condition node is gt(c, 0.5)
    "clamp": (lambda x, lo, hi: min(max(x, lo), hi), "triple"),
    "muladd": (lambda a, b, c: a + b * c, "triple"),  # fused: the double product of floats is exact
    "torch_fmod": (math.fmod, "nonzero"),
}
# bitwise selectors: 32-bit integers
INT_REFERENCES = {
    "bitwise_and": lambda a, b: a & b,
    "bitwise_or": lambda a, b: a | b,
    "bitwise_xor": lambda a, b: a ^ b,
    "bitwise_not": lambda a: ~a,
    "lshift": lambda a, b: a << b,
    "rshift": lambda a, b: a >> b,
}
# selectors with an integer form: exact integer results
INT_FORMS = {
    "abs": abs,
    "neg": lambda x: -x,
    "sign": lambda x: (x > 0) - (x < 0),
    "square": lambda x: x * x,
    "ceil": lambda x: x,
    "floor": lambda x: x,
    "round": lambda x: x,
    "rint": lambda x: x,
    "trunc": lambda x: x,
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "floor_mod": lambda a, b: a % b,
    "mod": lambda a, b: int(math.fmod(a, b)),
    "fmax": max,
    "fmin": min,
    "maximum": max,
    "minimum": min,
    "clamp": lambda x, lo, hi: min(max(x, lo), hi),
    "maximum_int": max,
    "minimum_int": min,
    "relu": lambda x: max(x, 0),
    "muladd": lambda a, b, c: a + b * c,
    "torch_fmod": lambda a, b: int(math.fmod(a, b)),
    "trunc_divide": lambda a, b: abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1),
    "floor_divide_int": lambda a, b: a // b,
}


def _reference_out(op: str, columns: list[torch.Tensor]) -> torch.Tensor:
    rule = table().ops[op]
    inputs = [Node("input", name=f"i{k}") for k in range(rule.arity)]
    args = list(inputs)
    if rule.cls == "select":
        args[0] = Node("gt", (inputs[0], Node("const", value=0.5, like=inputs[0])))
    return evaluate_with_torch(Dag(inputs, Node(op, tuple(args))), {f"i{k}": c for k, c in enumerate(columns)})


def test_every_selector_has_an_independent_reference():
    assert set(REFERENCES) | set(INT_REFERENCES) == set(table().ops)


@pytest.mark.parametrize("op", sorted(REFERENCES))
def test_torch_reference_values_float(op):
    formula, domain = REFERENCES[op]
    columns = [torch.tensor(c, dtype=torch.float32) for c in _DOMAINS[domain]]
    out = _reference_out(op, columns)
    rows = list(zip(*(c.double().tolist() for c in columns)))
    want = [formula(*row) for row in rows]
    assert (out.dtype == torch.bool) == table().ops[op].returns_bool
    if out.dtype == torch.bool:
        assert out.tolist() == [bool(w) for w in want]
    else:
        torch.testing.assert_close(
            out.double(), torch.tensor(want, dtype=torch.float64), rtol=2e-6, atol=1e-6, equal_nan=True
        )


@pytest.mark.parametrize("op", sorted(set(INT_REFERENCES) | set(INT_FORMS)))
def test_torch_reference_values_int(op):
    formula = INT_REFERENCES.get(op) or INT_FORMS[op]
    arity = table().ops[op].arity
    cols = [[-7, 5, 3, -4, 6, 0], [2, -3, 1, 3, 4, 5], [-1, 0, 2, 1, 5, -2]][:arity]
    if op in ("lshift", "rshift"):
        cols[1] = [1, 2, 0, 3, 4, 1]  # shift counts are not negative
    if op == "clamp":
        cols = [cols[0], [-2, -2, 0, -5, 0, 1], [2, 4, 1, 0, 3, 2]]
    columns = [torch.tensor(c, dtype=torch.int32) for c in cols]
    out = _reference_out(op, columns)
    assert not out.dtype.is_floating_point, out.dtype
    assert out.tolist() == [formula(*row) for row in zip(*cols)]


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


# ------------------------------------------------- dtype tests by MPSDataType flag bit
INTS = ",".join(sorted(dtype_family("integral")))  # rules/dtypes.yaml: the arm a float-bit test leaves to ints


def _translate(body: str, **known) -> Dag:
    """The DAG of one binary graph block ``body`` (inputs a, b), with the caller's literals ``known``."""
    text = "auto f = ^MPSGraphTensor*(MPSGraph* g, MPSGraphTensor* a, MPSGraphTensor* b) {\n" + body + "\n};"
    _, blocks = o.parse_statements(text)
    return Translator("x.mm:1", known={k: Known(v) for k, v in known.items()}).block(blocks[0])


# div_mode_template's shape (my own text): a bool holding a float-bit test of the input, integer inputs
# cast to float32, then a second test on the quotient (which follows the input, or is the cast's float)
_DIV_MODE = """
  bool isFloatInput = ([a dataType] & MPSDataTypeFloatBit) != 0;
  if (!isFloatInput && rounding_mode.has_value()) {
    a = [g castTensor:a toType:MPSDataTypeFloat32 name:@"a"];
    b = [g castTensor:b toType:MPSDataTypeFloat32 name:@"b"];
  }
  MPSGraphTensor* q = [g divisionWithPrimaryTensor:a secondaryTensor:b name:nil];
  bool isFloatOutput = ([q dataType] & MPSDataTypeFloatBit) != 0;
  if (!rounding_mode.has_value() || !isFloatOutput) {
    return q;
  } else if (*rounding_mode == "floor") {
    return [g floorWithTensor:q name:nil];
  }
  return nullptr;
"""


def test_float_bit_test_of_the_input_branches_per_dtype_and_decides_the_quotients_test():
    # the integer arm's quotient is a float32 cast's, the float arm's follows the input: both take floor
    dag = _translate(_DIV_MODE, rounding_mode="floor")
    assert dag.structure() == (f"if_dtype<{INTS}>(a, floor(div(cast<float>(a), cast<float>(b))), floor(div(a, b)))")
    # no rounding mode: the caller's literal decides `!isFloatInput && rounding_mode.has_value()` (no cast, no
    # branch) and `!rounding_mode.has_value() || !isFloatOutput`, though neither dtype test is decided
    assert _translate(_DIV_MODE, rounding_mode=None).structure() == "div(a, b)"


@pytest.mark.parametrize(
    "cond, floor_for",
    [
        ("([a dataType] & MPSDataTypeFloatBit) != 0", "float"),
        ("0 != (MPSDataTypeFloatBit & a.dataType)", "float"),
        ("[a dataType] & MPSDataTypeFloatBit", "float"),
        ("([a dataType] & MPSDataTypeFloatBit) == 0", "int"),
        ("!([a dataType] & mps::MPSDataTypeFloatBit)", "int"),
    ],
)
def test_float_bit_test_forms(cond, floor_for):
    dag = _translate(f"if ({cond}) {{ return [g floorWithTensor:a name:nil]; }}\nreturn a;")
    want = f"if_dtype<{INTS}>(a, a, floor(a))" if floor_for == "float" else f"if_dtype<{INTS}>(a, floor(a), a)"
    assert dag.structure() == want


def test_complex_bit_test_names_the_complex_family():
    dag = _translate(
        "if (([a dataType] & MPSDataTypeComplexBit) != 0) { return [g negativeWithTensor:a name:nil]; }\nreturn a;"
    )
    assert dag.structure() == f"if_dtype<{','.join(sorted(dtype_family('complex')))}>(a, neg(a), a)"


def test_float_bit_test_of_a_tensor_following_the_input_branches_on_that_input():
    body = """
      MPSGraphTensor* q = [g divisionWithPrimaryTensor:b secondaryTensor:a name:nil];
      if (([q dataType] & MPSDataTypeFloatBit) == 0) { return q; }
      return [g floorWithTensor:q name:nil];
    """
    assert _translate(body).structure() == f"if_dtype<{INTS}>(b, div(b, a), floor(div(b, a)))"


def test_float_bit_test_of_a_cast_is_decided():
    body = """
      MPSGraphTensor* c = [g castTensor:a toType:MPSDataTypeInt32 name:@"c"];
      bool isFloat = ([c dataType] & MPSDataTypeFloatBit) != 0;
      if (isFloat) { return [g floorWithTensor:c name:nil]; }
      return [g addition WithPrimaryTensor:c secondaryTensor:b name:nil];
    """.replace("addition WithPrimaryTensor", "additionWithPrimaryTensor")
    assert _translate(body).structure() == "add(cast<int>(a), b)"


def test_a_bool_holds_the_test_of_the_tensor_it_saw():
    """`isFloat` tested `a` before `a` became a float32 cast: the branch is still on the input's dtype."""
    body = """
      bool isFloat = ([a dataType] & MPSDataTypeFloatBit) != 0;
      a = [g castTensor:a toType:MPSDataTypeFloat32 name:@"a"];
      if (!isFloat) { return [g floorWithTensor:a name:nil]; }
      return a;
    """
    assert _translate(body).structure() == f"if_dtype<{INTS}>(a, floor(cast<float>(a)), cast<float>(a))"


def test_a_dtype_test_nothing_decides_stays_refused():
    with pytest.raises(PortBlocked) as exc:
        _translate("if (([a dataType] & MPSDataTypeSignedBit) != 0) { return a; }\nreturn b;")
    assert exc.value.construct == "control flow (if)"

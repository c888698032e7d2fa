"""Route resolution in the index: the effective MPS route of every overload, its hops, and the classification."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.index import Index, is_shared, looks_mps_only, stub_candidates
from migrate.model import DispatchLine, Impl, Span, Via
from migrate.tree import load_tree
from tests.helpers import MINI, OPS, YAML, mini_copy

BK, BO, UK = f"{OPS}/BinaryKernel.mm", f"{OPS}/BinaryOps.mm", f"{OPS}/UnaryKernel.mm"

# overload -> (kernel, via, impl, defined_at) on fixtures/mini
MINI_ROUTES = {
    "atan2.out": ("atan2_out", "explicit", "metal", f"{BK}:14"),
    "atan2_": ("atan2_out", "delegate:atan2.out", "metal", f"{BK}:14"),
    "atan2": ("atan2_out", "delegate:atan2.out", "metal", f"{BK}:14"),
    "copysign.out": ("copysign_out", "explicit", "metal", f"{BK}:18"),
    "copysign.Tensor": ("copysign_out", "delegate:copysign.out", "metal", f"{BK}:18"),
    "copysign.Scalar_out": ("copysign_scalar_out_mps", "explicit", "mpsgraph", f"{BO}:82"),
    "copysign.Scalar": ("copysign", "composite", "delegating", None),
    "hypot.out": ("hypot_out_mps", "explicit", "mpsgraph", f"{BO}:72"),
    "hypot": ("hypot_out_mps", "delegate:hypot.out", "mpsgraph", f"{BO}:72"),
    "erfinv.out": ("erfinv_out_mps", "explicit", "undefined", None),
    "erfinv": ("erfinv_out_mps", "delegate:erfinv.out", "undefined", None),
    "fmax.out": ("fmax_out", "explicit", "undefined", None),
    "fmax": ("fmax_out", "delegate:fmax.out", "undefined", None),
    "fmin.out": ("fmin_out", "explicit", "metal", f"{BK}:22"),
    "fmin": ("fmin_out", "delegate:fmin.out", "metal", f"{BK}:22"),
    "nextafter.out": ("nextafter_out", "explicit", "metal", f"{BK}:30"),
    "nextafter": ("nextafter_out", "delegate:nextafter.out", "metal", f"{BK}:30"),
    "exp.out": ("exp_out", "explicit", "metal", f"{UK}:18"),
    "exp": ("exp_out", "delegate:exp.out", "metal", f"{UK}:18"),
    "exp2.out": ("exp2_out_mps", "explicit", "mpsgraph", f"{OPS}/UnaryOps.mm:44"),
    "exp2": ("exp2_out_mps", "delegate:exp2.out", "mpsgraph", f"{OPS}/UnaryOps.mm:44"),
    "softplus.out": ("softplus_out", "explicit", "delegating", None),
    "softplus": ("softplus_out", "delegate:softplus.out", "delegating", None),
    "hardtanh.out": ("hardtanh_out_mps", "explicit", "mpsgraph", f"{OPS}/Activation.mm:6"),
    "hardtanh": (None, "none", "undefined", None),
    "histc": ("histogram_histc_mps", "explicit", "metal", f"{OPS}/HistogramKernel.mm:51"),
    "histc.out": ("histogram_histc_out_mps", "explicit", "metal", f"{OPS}/HistogramKernel.mm:66"),
    "logit": ("logit", "composite", "delegating", None),
}


@pytest.fixture()
def mini():
    return Index(load_tree(MINI))


def where(r) -> str | None:
    """``path:line`` of the definition a route ends in."""
    return r.defined_at.where if r.defined_at else None


def test_every_route_of_the_mini_tree(mini):
    got = {k: (r.kernel, r.via_label, r.impl, where(r)) for k, r in mini.routes.items()}
    assert got == MINI_ROUTES
    assert all(r.overload == k for k, r in mini.routes.items())


def test_hops_name_each_step_of_a_route(mini):
    y = f"{YAML}:"
    assert mini.routes["atan2"].hops == (
        f"structured_delegate: atan2.out @ {y}16",
        f"CPU, CUDA, MPS: atan2_out @ {y}8",
        f"REGISTER_DISPATCH(atan2_stub, atan2_mps_kernel) @ {BK}:39",
        f"atan2_mps_kernel @ {BK}:14",
    )
    assert mini.routes["copysign.Scalar_out"].hops == (
        f"MPS: copysign_scalar_out_mps @ {y}36",
        f"copysign_scalar_out_mps (function) @ {BO}:82",
    )
    assert mini.routes["hypot.out"].hops == (f"MPS: hypot_out_mps @ {y}44", f"hypot_out_mps (macro) @ {BO}:72")
    assert mini.routes["erfinv.out"].hops == (f"MPS: erfinv_out_mps @ {y}57", "kernel not defined in the tree")
    assert mini.routes["fmax.out"].hops == (f"CPU, CUDA, MPS: fmax_out @ {y}64", "stub has no MPS registration")
    assert mini.routes["softplus.out"].hops == (f"MPS: softplus_out @ {y}106", "shared backend-agnostic kernel")
    assert mini.routes["copysign.Scalar"].hops == (f"CompositeExplicitAutograd: copysign @ {y}124",)
    assert mini.routes["logit"].hops == (f"CompositeImplicitAutograd (no dispatch block) @ {y}116",)
    assert mini.routes["hardtanh"].hops == (f"no MPS kernel @ {y}157",)


def test_families_that_are_native_metal(mini):
    assert [
        f
        for f in ("atan2", "copysign", "hypot", "exp", "fmax", "softplus", "logit", "fmin")
        if mini.family_is_native_metal(f)
    ] == ["atan2", "exp", "fmin"]
    assert not mini.family_is_native_metal("no_such_family")


def test_dead_functions_of_the_mini_tree(mini):
    assert sorted(f.name for f in mini.dead_functions) == ["atan2_out_mps", "exp_out_mps"]


def line(*keys: str) -> DispatchLine:
    s = Span("y", 1, 1, 1, 2, 0, 1)
    return DispatchLine(tuple(keys), "k", s, (s,) * len(keys), s)


def test_naming_helpers():
    assert is_shared(line("CPU", "CUDA", "MPS")) and is_shared(line("MPS", "XPU"))
    assert not is_shared(line("MPS")) and not is_shared(line("CPU", "CUDA"))
    assert not is_shared(line("MPS", "CompositeExplicitAutograd"))
    assert [
        k
        for k in ("foo_mps", "mps_foo", "foo_mps_out", "a_mps_b", "foomps", "mpsfoo", "foo_mpsx", "mps")
        if looks_mps_only(k)
    ] == ["foo_mps", "mps_foo", "foo_mps_out", "a_mps_b", "mps"]
    assert stub_candidates("atan2_out") == ["atan2_out_stub", "atan2_stub"]
    assert stub_candidates("add_") == ["add__stub", "add_stub"]
    assert stub_candidates("abs") == ["abs_stub"]
    assert stub_candidates("_out") == ["_out_stub"]
    assert stub_candidates("x_out_") == ["x_out__stub", "x_out_stub"]


def write_tree(root: Path, files: dict[str, str]) -> Index:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return Index(load_tree(root))


def test_delegates_to_missing_or_cyclic_targets(tmp_path):
    ix = write_tree(
        tmp_path,
        {
            YAML: (
                "- func: a(Tensor x) -> Tensor\n  structured_delegate: nope.out\n\n"
                "- func: b(Tensor x) -> Tensor\n  structured_delegate: c\n\n"
                "- func: c(Tensor x) -> Tensor\n  structured_delegate: b\n"
            )
        },
    )
    a, b = ix.routes["a"], ix.routes["b"]
    assert (a.kernel, a.via_label, a.impl, a.defined_at) == (None, "delegate:nope.out", "undefined", None)
    assert (a.via, a.delegate, a.impl) == (Via.DELEGATE, "nope.out", Impl.UNDEFINED)  # data, not a string to split
    assert a.overload == "a" and a.hops == (f"structured_delegate nope.out (not found) @ {YAML}:1",)
    assert (b.kernel, b.via_label, b.impl) == (None, "delegate:c", "undefined")
    assert b.hops == (f"structured_delegate: c @ {YAML}:4", f"structured_delegate b (not found) @ {YAML}:7")


MARKERS_MM = """#include <ATen/native/mps/OperationUtils.h>
namespace at::native {
static void graph_helper(const Tensor& t) {
  MPSGraph* g = make_graph();
}
static void metal_helper(const Tensor& t) {
  mtl_setArgs(t);
}
static void indirect(const Tensor& t) {
  graph_helper(t);
}
Tensor& both_mps(const Tensor& self, Tensor& out) {
  indirect(self);
  metal_helper(out);
  return out;
}
Tensor& graph_mps(const Tensor& self, Tensor& out) {
  indirect(self);
  return out;
}
Tensor& metal_mps(const Tensor& self, Tensor& out) {
  metal_helper(self);
  return out;
}
Tensor& plain_mps(const Tensor& self, Tensor& out) {
  return out;
}
Tensor& copying_mps(const Tensor& self, Tensor& out) {
  mps_copy_(out, self);
  return out;
}
Tensor& ping_mps(const Tensor& self, Tensor& out) {
  pong_mps(self, out);
  return out;
}
Tensor& pong_mps(const Tensor& self, Tensor& out) {
  ping_mps(self, out);
  metal_helper(out);
  return out;
}
static void mps_copy_(Tensor& dst, const Tensor& src) {
  mtl_setArgs(dst, src);
}
Tensor& over_mps(const Tensor& self, Tensor& out) {
  MPSGraph* g = nullptr;
  return out;
}
Tensor& over_mps(const Tensor& self, int64_t n, Tensor& out) {
  return out;
}
}
"""


def test_classification_follows_same_tree_calls(tmp_path):
    names = ["both", "graph", "metal", "plain", "copying", "ping", "over"]
    yaml = "".join(
        f"- func: {n}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    MPS: {n}_mps\n\n"
        for n in names
    )
    ix = write_tree(tmp_path, {YAML: yaml, f"{OPS}/Ops.mm": MARKERS_MM})
    assert {n: ix.routes[f"{n}.out"].impl for n in names} == {
        "both": "mixed",
        "graph": "mpsgraph",
        "metal": "metal",
        "plain": "delegating",
        "copying": "delegating",  # a copy helper uses Metal whatever the op computes with: not followed
        "ping": "metal",
        "over": "mpsgraph",
    }  # overloads: the markers of all of them
    assert ix.impl_of("nowhere") == "undefined"
    assert ix.marker_closure("both_mps") == {"MPSGraph", "mtl_setArgs"}
    assert ix.definition("graph_mps").name == "graph_mps" and ix.definition("nowhere") is None


SHARED_YAML = (
    "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU, CUDA, MPS: f_out\n\n"
    "- func: g.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: g_out\n    MPS: g_out\n\n"
    "- func: h(Tensor self) -> Tensor\n  dispatch:\n    CompositeImplicitAutograd: h_impl\n    CPU: h_cpu\n\n"
    "- func: j(Tensor self) -> Tensor\n  structured: True\n"
)
SHARED_MM = """#include <ATen/native/mps/OperationUtils.h>
namespace at::native {
static void f_kernel_mps(TensorIteratorBase& iter) {
  lib.exec_unary_kernel(iter, "f");
}
static void g_kernel_mps(TensorIteratorBase& iter) {
  MPSGraph* graph = nullptr;
}
REGISTER_DISPATCH(f_stub, &f_kernel_mps)
REGISTER_DISPATCH(g_stub, &g_kernel_mps)
}
"""


def test_shared_kernels_route_through_their_stub_registration(tmp_path):
    ix = write_tree(tmp_path, {YAML: SHARED_YAML, f"{OPS}/Ops.mm": SHARED_MM})
    f, g, h, j = (ix.routes[k] for k in ("f.out", "g.out", "h", "j"))
    assert (f.kernel, f.via, f.impl, where(f)) == ("f_out", "explicit", "metal", f"{OPS}/Ops.mm:3")
    assert f.hops[1:] == (f"REGISTER_DISPATCH(f_stub, f_kernel_mps) @ {OPS}/Ops.mm:9", f"f_kernel_mps @ {OPS}/Ops.mm:3")
    # an MPS-only line naming a kernel another backend uses is shared too
    assert (g.kernel, g.impl, where(g)) == ("g_out", "mpsgraph", f"{OPS}/Ops.mm:6")
    assert ix.stubs_of_shared_kernel("g_out") == ["g_stub"] and ix.stubs_of_shared_kernel("zz_out") == []
    assert ix.used_by_other_backend("g_out") and not ix.used_by_other_backend("nowhere")
    assert (h.kernel, h.via, h.impl) == ("h_impl", "composite", "delegating")
    assert (j.kernel, j.via, j.impl, j.hops) == (None, "none", "undefined", (f"no MPS kernel @ {YAML}:15",))


def test_metal_kernel_exists_for_a_registered_functor(mini):
    assert mini.metal_kernel_exists("atan2")
    assert not mini.metal_kernel_exists("nextafter") and not mini.metal_kernel_exists("atan")


def test_metal_kernel_exists_by_host_name_or_name_prefix(tmp_path):
    metal = """kernel void baz(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = 0;
}
template <typename T>
kernel void bar(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = 0;
}
template [[host_name("bar_float")]] kernel void bar<float>(device float*, uint);
template <typename T>
kernel void quux_impl(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = 0;
}
template [[host_name("qux_float")]] kernel void quux_impl<float>(device float*, uint);
"""
    ix = write_tree(
        tmp_path, {YAML: "- func: a(Tensor self) -> Tensor\n", "aten/src/ATen/native/mps/kernels/K.metal": metal}
    )
    assert [n for n in ("baz", "bar", "bar_float", "qux", "ba", "ba_", "baz_float") if ix.metal_kernel_exists(n)] == [
        "baz",
        "bar",
        "bar_float",
        "qux",
    ]


def test_stub_known_only_by_declaration_or_by_the_cpu_kernel(tmp_path):
    yaml = "".join(
        f"- func: {n}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU, CUDA, MPS: {n}_out\n\n"
        for n in ("d", "c", "u", "r")
    )
    ix = write_tree(
        tmp_path,
        {
            YAML: yaml,
            "aten/src/ATen/native/D.h": "namespace at::native {\nDECLARE_DISPATCH(unary_fn, d_stub)\n}\n",
            "aten/src/ATen/native/C.cpp": (
                "namespace at::native {\nTORCH_IMPL_FUNC(c_out)(const Tensor& self, "
                "const Tensor& result) {\n  c_stub(device_type(), *this);\n}\n}\n"
            ),
            f"{OPS}/R.mm": "namespace at::native {\nREGISTER_DISPATCH(r_stub, &r_kernel_elsewhere)\n}\n",
        },
    )
    for n in ("d", "c"):
        r = ix.routes[f"{n}.out"]
        assert (r.impl, where(r), r.hops[-1]) == ("undefined", None, "stub has no MPS registration"), n
    u = ix.routes["u.out"]
    assert (u.impl, u.hops[-1]) == ("delegating", "shared backend-agnostic kernel")
    r = ix.routes["r.out"]  # registered, but the registered function is not in the tree
    assert (r.impl, where(r)) == ("undefined", f"{OPS}/R.mm:2")
    assert r.hops[1:] == (f"REGISTER_DISPATCH(r_stub, r_kernel_elsewhere) @ {OPS}/R.mm:2",)


def test_mps_line_of_an_entry_from_another_yaml(mini):
    """The index memoises its own entries' MPS lines; an entry it does not hold (a port's re-read yaml) gets
    its own line, and None when it has no MPS line."""
    from migrate.read.yaml_reader import read_native_yaml

    other = read_native_yaml(
        b"- func: cosh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
        b"  dispatch:\n    CPU: cosh_out\n    MPS: cosh_out_mps\n"
        b"- func: cosh(Tensor self) -> Tensor\n  structured_delegate: cosh.out\n",
        "other.yaml",
    ).entries
    line = mini.mps_line(other[0])
    assert line is not None and line.kernel == "cosh_out_mps" and line.keys == ("MPS",)
    assert mini.mps_line(other[1]) is None
    own = mini.entries["exp2.out"]
    assert mini.mps_line(own) == own.kernel_for("MPS") and mini.mps_line(own) is not None


def test_the_yaml_maps_are_worked_out_while_the_tree_is_read_and_kept_off_the_model():
    """index.YamlSide: a cold load_tree works the yaml's maps out in the parse phase (tree.read_yaml_job); an
    Index then reads those, and the model's fields, equality and codec form stay as they were."""
    from migrate import codec
    from migrate.cache import disable_cache
    from migrate.index import yaml_side
    from migrate.read.yaml_reader import read_native_yaml
    from migrate.tree import Tree

    with disable_cache():
        tree = load_tree(MINI)
    side = tree.yaml.__dict__.get("_yaml_side")
    assert side is not None
    worked = {"entries", "families", "yaml_kernels", "entries_by_name", "mps_lines", "mps_entries", "kernel_families"}
    assert worked <= set(vars(side))  # all there before any Index asked
    ix = Index(tree)
    assert ix.entries is side.entries and ix.mps_entries is side.mps_entries and ix.families is side.families
    assert ix.kernel_families is side.kernel_families and ix.yaml_kernels is side.yaml_kernels
    assert ix.entries_by_name is side.entries_by_name and ix._mps_lines is side.mps_lines
    assert yaml_side(tree.yaml) is side
    plain = read_native_yaml(tree.sources[YAML], YAML)
    assert plain == tree.yaml and codec.dumps(plain) == codec.dumps(tree.yaml) and "_yaml_side" not in vars(plain)
    fresh = Index(Tree(root=MINI, yaml=plain))  # the maps worked out on first read, the same
    assert fresh.entries == ix.entries and len(ix.entries) == 28
    assert fresh.mps_entries == ix.mps_entries and len(ix.mps_entries) == 14
    assert fresh.families == ix.families and len(ix.families) == 13
    assert fresh.yaml_kernels == ix.yaml_kernels and fresh.entries_by_name == ix.entries_by_name
    assert sorted(fresh.kernel_families) == sorted(ix.kernel_families) == [
        "atan2", "copysign", "erfinv", "exp", "exp2", "fmax", "fmin", "hardtanh", "histc", "hypot", "nextafter",
        "softplus",
    ]  # fmt: skip


def test_the_yaml_maps_take_the_last_mps_line_and_count_delegates_as_reaching_a_kernel():
    """One pass builds every map: an entry's MPS line is its last line naming MPS (NativeEntry.kernel_for; torchgen
    lets a later line set a key again, as effective_dispatch does), and
    a family reaches a kernel through MPS by an MPS line or a structured_delegate alone."""
    from migrate.index import yaml_side
    from migrate.model import DispatchLine, NativeEntry, NativeYaml
    from migrate.read.yaml_reader import effective_dispatch

    span = Span("y", 1, 1, 1, 2, 0, 1)

    def line(keys, kernel):
        return DispatchLine(keys, kernel, span, (span,) * len(keys), span)

    first, second = line(("CPU", "MPS"), "at::native::a_first"), line(("MPS",), "a_second")
    a = NativeEntry("a(Tensor x) -> Tensor", "a", "", span, 1, (line(("CUDA",), "a_cuda"), first, second), 2)
    b = NativeEntry("b_(Tensor(a!) x) -> Tensor(a!)", "b_", "", span, 5, (), None, structured_delegate="b.out")
    c = NativeEntry("c(Tensor x) -> Tensor", "c", "", span, 7, (line(("CPU",), "c_cpu"),), 8)
    side = yaml_side(NativeYaml("y", (a, b, c)))
    assert (
        side.mps_lines == {id(a): second, id(b): None, id(c): None} == {id(e): e.kernel_for("MPS") for e in (a, b, c)}
    )
    assert side.mps_entries == [(a, second)] and effective_dispatch(a)["MPS"] == second.kernel_name
    assert side.kernel_families == frozenset({"a", "b"})
    assert side.yaml_kernels["a_first"] == [(a, first)] and side.yaml_kernels["c_cpu"] == [(c, c.dispatch[0])]
    assert dict(side.families) == {"a": [a], "b": [b], "c": [c]} and side.entries_by_name == {"a", "b_", "c"}
    assert side.entries == {"a": a, "b_": b, "c": c}


def test_routes_made_without_the_dataclass_init_equal_those_it_makes():
    import dataclasses
    import pickle

    from migrate.index import _new_route
    from migrate.model import Route

    span = Span("a.mm", 1, 1, 2, 1, 0, 9)
    for args in (
        ("atan2.out", "atan2_out", Via.EXPLICIT, Impl.METAL, span, ("x @ y:1", "z")),
        ("atan2", None, Via.DELEGATE, Impl.UNDEFINED, None, ("d",), "atan2.out"),
    ):
        made, init = _new_route(*args), Route(*args)
        assert made == init and hash(made) == hash(init) and repr(made) == repr(init)
        assert list(made.__dict__) == [f.name for f in dataclasses.fields(Route)] == list(init.__dict__)
        assert pickle.dumps(made) == pickle.dumps(init)
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.kernel = "other"


def test_stub_answers_are_remembered_per_index_and_handed_out_as_fresh_lists(mini):
    ix = Index(load_tree(MINI))
    kernels = sorted({d.kernel_name for e in ix.tree.yaml.entries for d in e.dispatch})
    fresh = Index(ix.tree)
    for k in kernels:
        for ask in ("stubs_of_shared_kernel", "stubs_reached", "operators_called"):
            first = getattr(ix, ask)(k)
            first.append("mutated by a caller")
            assert getattr(ix, ask)(k) == getattr(fresh, ask)(k) == first[:-1]
    assert any(ix.stubs_of_shared_kernel(k) for k in kernels)


def _with_partly_read(tree, files: dict[str, bytes | None]):
    """``tree`` with host ``files`` (path -> bytes, None: as read) read only in part, as a reader reports it."""
    from migrate.model import ParseError

    for path, data in files.items():
        if data is not None:
            tree.sources[path] = data
        tree.errors.append(ParseError(path, 1, 1, "host reader failed", partial=True))
    return Index(tree)


def test_a_route_names_the_partly_read_file_that_may_hold_what_it_misses():
    """Each note names the first partly read host file whose bytes name what the route did not find: the kernel's
    definition, or the MPS registration of each of its stubs (the first note kept); a route through a partly read
    file says it may be incomplete."""
    broken, other = f"{OPS}/Broken.mm", f"{OPS}/Other.mm"
    tree = load_tree(MINI)
    tree.declared_stubs["other_stub"] = Span(YAML, 1, 1, 1, 2, 0, 1)
    tree.cpu_stub_calls["fmax_out"] = frozenset({"fmax_stub", "other_stub"})
    ix = _with_partly_read(tree, {broken: b"other_stub erfinv_out_mps", other: b"fmax_stub other_stub", BO: None})
    erfinv, fmax = ix.routes["erfinv.out"], ix.routes["fmax.out"]
    assert erfinv.hops[1:] == (
        "kernel not defined in the tree",
        f"{broken} could not be read completely: its definition may be there",
    )
    assert fmax.impl == Impl.UNDEFINED and fmax.hops[1:] == (
        "stub has no MPS registration",
        f"{other} could not be read completely: the MPS registration of fmax_stub may be there",
    )
    assert ix.routes["hypot.out"].hops[-2:] == (
        f"hypot_out_mps (macro) @ {BO}:72",
        f"{BO} could not be read completely: this route may be incomplete",
    )
    assert ix.routes["exp2.out"].hops[-1] == f"exp2_out_mps (macro) @ {OPS}/UnaryOps.mm:44"  # its file read whole
    clean = Index(load_tree(MINI))
    assert clean.routes["erfinv.out"].hops[1:] == ("kernel not defined in the tree",)
    assert clean.routes["fmax.out"].hops[1:] == ("stub has no MPS registration",)


def test_a_shared_kernel_that_calls_operators_is_composite_and_says_which():
    tree = load_tree(MINI)
    tree.native_at_calls["softplus_out"] = frozenset({"exp", "atan2", "not_an_operator"})
    r = Index(tree).routes["softplus.out"]
    assert r.impl == Impl.DELEGATING and r.hops[-1] == "composite: calls at::atan2, at::exp"
    assert Index(load_tree(MINI)).routes["softplus.out"].hops[-1] == "shared backend-agnostic kernel"


def test_a_key_given_twice_routes_as_torchgen_does_by_its_last_line(tmp_path):
    """``MPS: k_mps`` then ``CPU, CUDA, MPS: k``: torchgen's MPS kernel is k (the later line sets the key again), so
    the overload runs the shared stub's Metal registration and is no half-migrated MPSGraph overload."""
    from migrate.config import Config
    from migrate.lint import lint_tree

    root = mini_copy(tmp_path)
    y = root / YAML
    text = y.read_text()
    old = "    CPU, CUDA: copysign_scalar_out\n    MPS: copysign_scalar_out_mps\n"
    assert old in text
    y.write_text(text.replace(old, "    MPS: copysign_scalar_out_mps\n    CPU, CUDA, MPS: copysign_scalar_out\n"))
    tree = load_tree(root)
    r = Index(tree).routes["copysign.Scalar_out"]
    assert (r.kernel, r.via, r.impl, where(r)) == ("copysign_scalar_out", Via.EXPLICIT, Impl.METAL, f"{BK}:18")
    assert [
        f for f in lint_tree(tree, Config(select=["MPS001", "MPS002"])).findings if f.overload == "copysign.Scalar_out"
    ] == []

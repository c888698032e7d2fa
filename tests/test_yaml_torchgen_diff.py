"""Differential tests: the yaml reader against torchgen, the reference parser.

For every entry of the real native_functions.yaml, the reader's
``effective_dispatch`` must equal what torchgen's backend indices hold for
that function, and structured / structured_delegate / tags / out / inplace
must agree.  Runs on the yaml shipped with the installed torchgen (parsed in
process, once per module) and on the PyTorch 2.6.0 tree's yaml (parsed by
that tree's own torchgen in a subprocess).
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from migrate.model import NativeYaml
from migrate.read import yaml_fast, yaml_reader
from migrate.read.yaml_reader import effective_dispatch, read_native_yaml_file
from tests.corpus import pytorch_260_root, pytorch_270a0_root

# Tags torchgen adds on its own (pt2_compliant_tag to aten ops, out / inplace by schema).
AUTO_TAGS = {"pt2_compliant_tag", "out", "inplace"}


def torchgen_view(functions: Any, backend_indices: Any) -> list[dict[str, Any]]:
    """What torchgen decided for each NativeFunction, as plain JSON-able data.

    Also runs inside a subprocess against another tree's torchgen (its source
    is shipped there with inspect.getsource), so it only uses what it is given.
    """
    out = []
    for f in functions:
        name = f.func.name
        dispatch = {str(k): idx.index[name].kernel for k, idx in backend_indices.items() if name in idx.index}
        out.append(
            {
                "name": str(name),
                "func": str(f.func),
                "line": f.loc.line,
                "dispatch": dispatch,
                "structured": f.structured,
                "delegate": None if f.structured_delegate is None else str(f.structured_delegate),
                "tags": sorted(f.tags),
                "is_out": f.func.is_out_fn(),
                "inplace": bool(name.name.inplace and not name.name.dunder_method),
                "manual_kernel_registration": f.manual_kernel_registration,
                "ufunc": bool(f.ufunc_inner_loop),
            }
        )
    return out


def compare(ours: NativeYaml, ref: list[dict[str, Any]]) -> list[str]:
    """Differences between the reader and torchgen; torchgen's own yaml entries come first, in order."""
    problems: list[str] = []
    if len(ref) < len(ours.entries):
        return [f"torchgen has {len(ref)} functions, the reader {len(ours.entries)} entries"]
    for e, r in zip(ours.entries, ref):
        where = f"{e.overload_name} @ line {e.func_line}"
        if (e.overload_name, e.func, e.func_line) != (r["name"], r["func"], r["line"]):
            problems.append(f"{where}: torchgen has {r['name']} @ line {r['line']}: {r['func']!r}")
            continue
        mine = effective_dispatch(e)
        if mine != r["dispatch"]:
            problems.append(f"{where}: dispatch {mine} != torchgen {r['dispatch']}")
        got = (
            e.structured,
            e.structured_delegate,
            e.is_out,
            e.is_inplace,
            e.manual_kernel_registration,
            e.ufunc_inner_loop,
        )
        want = (r["structured"], r["delegate"], r["is_out"], r["inplace"], r["manual_kernel_registration"], r["ufunc"])
        if got != want:
            problems.append(f"{where}: (structured, delegate, out, inplace, manual, ufunc) {got} != {want}")
        tags, ref_tags = set(e.tags), set(r["tags"])
        extra = ref_tags - tags
        if not tags <= ref_tags or not extra <= AUTO_TAGS:
            problems.append(f"{where}: tags {sorted(tags)} vs torchgen {sorted(ref_tags)}")
        augmented = e.name.startswith("__i") and e.name.endswith(
            "__"
        )  # __iand__: inplace for torchgen, a dunder for us
        if ("out" in extra and not e.is_out) or ("inplace" in extra and not (e.is_inplace or augmented)):
            problems.append(f"{where}: torchgen added {sorted(extra)} but out={e.is_out} inplace={e.is_inplace}")
    return problems


def check_spans(data: bytes, ours: NativeYaml) -> list[str]:
    problems = []
    for e in ours.entries:
        if not data[e.span.start : e.span.end].startswith(b"- "):
            problems.append(f"{e.overload_name}: entry span does not start at '- '")
        for d in e.dispatch:
            text = data[d.span.start : d.span.end].decode()
            if data[d.kernel_span.start : d.kernel_span.end].decode() != d.kernel or not text.endswith(d.kernel):
                problems.append(f"{e.overload_name}: kernel span {text!r}")
            if [data[s.start : s.end].decode() for s in d.key_spans] != list(d.keys) or not text.startswith(d.keys[0]):
                problems.append(f"{e.overload_name}: key spans {text!r}")
    return problems


# ------------------------------------------------------ installed torchgen
@pytest.fixture(scope="module")
def installed() -> tuple[bytes, NativeYaml, list[dict[str, Any]]]:
    torchgen = pytest.importorskip("torchgen")
    import torchgen.gen as tg

    native = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    yaml_path = native / "native_functions.yaml"
    parsed = tg.parse_native_yaml(str(yaml_path), str(native / "tags.yaml"))
    ours = read_native_yaml_file(yaml_path, "aten/src/ATen/native/native_functions.yaml")
    return yaml_path.read_bytes(), ours, torchgen_view(parsed.native_functions, parsed.backend_indices)


def test_installed_yaml_reads_without_errors(installed: tuple[bytes, NativeYaml, list[dict[str, Any]]]) -> None:
    _, ours, ref = installed
    assert ours.errors == ()
    assert len(ours.entries) > 2000
    assert len(ref) > len(ours.entries)  # torchgen also generates (autogen) functions


def test_installed_yaml_matches_torchgen(installed: tuple[bytes, NativeYaml, list[dict[str, Any]]]) -> None:
    _, ours, ref = installed
    problems = compare(ours, ref)
    assert problems == [], "\n".join(problems[:20])
    # the comparison saw the interesting cases
    entries = ours.entries
    assert any("MPS" in effective_dispatch(e) for e in entries)
    assert any(e.ufunc_inner_loop for e in entries)
    assert any(e.dispatch_line is not None and not e.dispatch for e in entries)  # "dispatch: {}"
    assert any(effective_dispatch(e) == {"CompositeImplicitAutograd": e.name + "_out"} for e in entries)


def test_installed_yaml_spans(installed: tuple[bytes, NativeYaml, list[dict[str, Any]]]) -> None:
    data, ours, _ = installed
    assert check_spans(data, ours) == []


def test_fast_path_equals_line_scanner_on_real_yaml(installed: tuple[bytes, NativeYaml, list[dict[str, Any]]]) -> None:
    data, ours, _ = installed
    assert yaml_reader._Scanner(data, ours.path).run(fast=False) == ours
    # and the fast path really takes the bulk of the file
    chunks = data.split(b"\n- ")
    scanner = yaml_reader._Scanner(data, ours.path)
    off, line, fast = len(chunks[0]) + 1, chunks[0].count(b"\n") + 2, 0
    for c in chunks[1:]:
        fast += yaml_fast.fast_entry(scanner, c, line, off, c.count(b"\n"))
        line += c.count(b"\n") + 1
        off += len(c) + 3
    assert fast > 0.9 * len(ours.entries)
    assert set(scanner.entries) <= set(ours.entries)


# ------------------------------------------------------- PyTorch 2.6.0 tree
VIEW_SCRIPT = """from __future__ import annotations
import json, sys
import torchgen, torchgen.gen as tg
{view}
yaml_path, tags_path = sys.argv[1], sys.argv[2]
parsed = tg.parse_native_yaml(yaml_path, tags_path)
print(json.dumps({{"torchgen": torchgen.__file__, "functions": torchgen_view(parsed.native_functions, parsed.backend_indices)}}))
"""


def _read_with_torchgen(root, label: str) -> tuple[bytes, NativeYaml, list[dict[str, Any]], str]:
    native = root / "aten" / "src" / "ATen" / "native"
    yaml_path = native / "native_functions.yaml"
    if not (root / "torchgen").is_dir() or not yaml_path.is_file():
        pytest.skip(f"{root} lacks torchgen/ or native_functions.yaml")
    script = VIEW_SCRIPT.format(view=inspect.getsource(torchgen_view))
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(yaml_path), str(native / "tags.yaml")],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(root),
        timeout=300,
    )
    if proc.returncode != 0:
        pytest.fail(f"the {label} tree's torchgen failed:\n" + proc.stderr[-3000:])
    out = json.loads(proc.stdout)
    ours = read_native_yaml_file(yaml_path, "aten/src/ATen/native/native_functions.yaml")
    return yaml_path.read_bytes(), ours, out["functions"], out["torchgen"]


@pytest.fixture(scope="module")
def tree_260() -> tuple[bytes, NativeYaml, list[dict[str, Any]], str]:
    return _read_with_torchgen(pytorch_260_root(), "2.6.0")


def test_270a0_yaml_matches_its_own_torchgen() -> None:
    """The tree that ships with the corpus: this check runs everywhere."""
    data, ours, ref, torchgen_file = _read_with_torchgen(pytorch_270a0_root(), "2.7.0a0")
    assert "site-packages" not in torchgen_file
    assert ours.errors == ()
    problems = compare(ours, ref)
    assert problems == [], "\n".join(problems[:20])
    assert check_spans(data, ours) == []


def test_260_yaml_matches_its_own_torchgen(tree_260: tuple[bytes, NativeYaml, list[dict[str, Any]], str]) -> None:
    data, ours, ref, torchgen_file = tree_260
    assert "site-packages" not in torchgen_file  # really the tree's torchgen
    assert ours.errors == ()
    problems = compare(ours, ref)
    assert problems == [], "\n".join(problems[:20])
    assert check_spans(data, ours) == []
    assert yaml_reader._Scanner(data, ours.path).run(fast=False) == ours


def test_260_mps_numbers(tree_260: tuple[bytes, NativeYaml, list[dict[str, Any]], str]) -> None:
    # domain.md's table for 2.6.0: 417 lines with an MPS key, 309 "MPS: *_mps", 48 shared lines incl. MPS
    _, ours, _, _ = tree_260
    lines = [d for e in ours.entries for d in e.dispatch if "MPS" in d.keys]
    assert len(lines) == 417
    assert sum(1 for d in lines if d.keys == ("MPS",) and d.kernel.endswith("_mps")) == 309
    assert sum(1 for d in lines if len(d.keys) > 1) == 48

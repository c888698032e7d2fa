"""mps-migrate status: route kinds, categories, MPSGraph families, formats, --compare, the HTML page in Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import types
from html.parser import HTMLParser
from pathlib import Path

import pytest

from migrate.index import Index
from migrate.status import category_of, compare, compute_status
from migrate.status.counting import KINDS, NO_HOST
from migrate.tables import load_table
from migrate.tree import load_tree
from tests.corpus import pytorch_260_root
from tests.helpers import FIXTURES, MINI, OPS, YAML, run_cli

CHROMIUM = next((c for c in ("chromium", "chromium-browser", "google-chrome") if shutil.which(c)), None)


@pytest.fixture(scope="module")
def mini_status():
    return compute_status(Index(load_tree(MINI)))


def status_json(*args: str) -> dict:
    p = run_cli("status", *args, "--format", "json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_route_kinds_of_known_overloads(mini_status):
    k = mini_status.overload_kind
    assert k["atan2.out"] == k["atan2"] == k["atan2_"] == "metal-shared"  # delegates count as their target
    assert k["histc"] == "metal-mps"  # MPS: histogram_histc_mps, a Metal kernel of its own
    assert k["copysign.Scalar_out"] == k["hypot.out"] == k["hypot"] == "mpsgraph"
    assert k["hardtanh.out"] == "mpsgraph"  # *_mps on a shared line: still MPSGraph code
    assert k["softplus.out"] == "delegating"
    assert k["logit"] == "composite"
    assert k["erfinv.out"] == k["erfinv"] == k["fmax.out"] == "undefined"
    assert k["hardtanh"] == "none"
    assert set(k.values()) <= set(KINDS)


def test_counts_add_up(mini_status):
    d = mini_status.to_json()
    n = d["overloads"]
    assert n == len(load_tree(MINI).yaml.entries) == sum(d["kinds"].values())
    assert sum(sum(c.values()) for c in d["by_category"].values()) == n
    assert sum(sum(c.values()) for c in d["by_host"].values()) == n
    assert set(d["by_host"]["aten/src/ATen/native/mps/operations/BinaryKernel.mm"]) == {"metal-shared"}
    assert d["by_category"]["unary"] == {"metal-shared": 2, "mpsgraph": 2}
    assert set(d["by_category"][NO_HOST]) <= {"composite", "none", "delegating", "undefined"}


def test_categories_from_file_names():
    assert category_of(f"{OPS}/UnaryOps.mm") == category_of(f"{OPS}/UnaryKernel.mm") == "unary"
    assert category_of(f"{OPS}/BitwiseOps.mm") == "binary"
    assert category_of(f"{OPS}/FusedAdamWKernelImpl.mm") == "optimizer"
    assert category_of(f"{OPS}/NewThingOps.mm") == "newthing"  # fallback: stem without Ops/Kernel
    assert category_of(f"{OPS}/Foo.mm") == "foo"
    table = load_table("categories.yaml")
    assert all(isinstance(v, list) and v for v in table.values())


def test_families_half_migrated_first(mini_status):
    fams = mini_status.families
    names = [f.name for f in fams]
    assert names[0] == "copysign" and {"exp2", "hardtanh", "hypot"} <= set(names)
    assert names[1:] == sorted(names[1:])
    cs = fams[0]
    assert cs.half_migrated and cs.graph_overloads == ["copysign.Scalar_out"]
    assert cs.metal_overloads == ["copysign.out", "copysign.Tensor"] and cs.kernels == ["copysign_scalar_out_mps"]
    assert not any(f.half_migrated for f in fams[1:])


def test_port_column_agrees_with_port_list():
    """The real migrate.port: status calls a family portable exactly when ``port --list`` does."""
    root = FIXTURES / "port"
    p = run_cli("port", "--list", "--root", str(root), "--format", "json")
    assert p.returncode == 0, p.stderr
    verdicts = {v["family"]: v for v in json.loads(p.stdout)}
    status = status_json("--root", str(root))
    assert status["port_note"] == ""
    column = {f["name"]: f for f in status["mpsgraph_families"]}
    assert column.keys() == verdicts.keys()
    for name, f in column.items():
        assert f["portable"] is (verdicts[name]["status"] == "portable"), name
        assert (f["reasons"] == []) is f["portable"]
    assert column["hypot"]["portable"] is True
    assert column["mm"]["portable"] is False and "not elementwise" in column["mm"]["reasons"][0]


def test_portability_unknown_without_port_function(monkeypatch):
    monkeypatch.setitem(sys.modules, "migrate.port", types.ModuleType("migrate.port"))
    s = compute_status(Index(load_tree(MINI)))
    assert s.port_note and all(f.portable is None for f in s.families)
    text = run_cli("status", "--root", str(MINI)).stdout
    assert "HALF copysign" in text


def test_portability_used_when_port_provides_it(monkeypatch):
    seen = []

    def portability(index, family):
        seen.append(family)
        assert isinstance(index, Index)
        if family == "hypot":
            raise RuntimeError("boom")
        return (family == "exp2", [] if family == "exp2" else [f"{family}: selector fooWithTensor: unsupported"])

    port = types.ModuleType("migrate.port")
    port.portability = portability
    monkeypatch.setitem(sys.modules, "migrate.port", port)
    s = compute_status(Index(load_tree(MINI)))
    assert sorted(seen) == sorted(f.name for f in s.families) and "hypot" in seen
    by = {f.name: f for f in s.families}
    assert by["exp2"].portable is True and by["copysign"].portable is False
    assert by["copysign"].reasons == ["copysign: selector fooWithTensor: unsupported"]
    assert by["hypot"].portable is None and "boom" in by["hypot"].reasons[0]
    from migrate.status.markdown import render_markdown

    md = render_markdown(s)
    assert "- [ ] **exp2**: `exp2.out`, `exp2` in `UnaryOps.mm`; port: yes" in md
    assert "port: no: copysign: selector fooWithTensor: unsupported" in md


def test_markdown_and_text_formats():
    md = run_cli("status", "--root", str(MINI), "--format", "markdown").stdout
    tasks = [line for line in md.splitlines() if line.startswith("- [ ] ")]
    assert len(tasks) == len(status_json("--root", str(MINI))["mpsgraph_families"]) and tasks[0].startswith(
        "- [ ] **copysign** — **half-migrated** (MPS001)"
    )
    d = status_json("--root", str(MINI))
    n = d["kinds"]["mpsgraph"]
    assert f"| MPSGraph | {n} | {100 * n / d['overloads']:.1f}% |" in md
    text = run_cli("status", "--root", str(MINI)).stdout
    assert re.search(rf"MPSGraph\s+{n}\s+#+", text) and "(1 half-migrated, listed first)" in text


def test_bad_root_is_one_line_error(tmp_path):
    p = run_cli("status", "--root", str(tmp_path))
    assert p.returncode == 2 and "not inside a PyTorch tree" in p.stderr and "Traceback" not in p.stderr


# ---------------------------------------------------------------- compare
def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.fixture()
def changed_mini(tmp_path):
    """mini with hypot migrated, exp sent back to MPSGraph and a new xlogy family."""
    root = tmp_path / "mini2"
    shutil.copytree(MINI, root)
    _edit(root / YAML, "    CPU, CUDA: hypot_out\n    MPS: hypot_out_mps\n", "    CPU, CUDA, MPS: hypot_out\n")
    _edit(root / YAML, "    CPU, CUDA, MPS: exp_out\n", "    CPU, CUDA: exp_out\n    MPS: exp_out_mps\n")
    with open(root / YAML, "a") as fh:
        fh.write(
            "\n- func: xlogy.OutTensor(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n"
            "  structured: True\n  structured_inherits: TensorIteratorBase\n"
            "  dispatch:\n    CPU, CUDA, MPS: xlogy_out\n"
        )
    _edit(
        root / OPS / "BinaryKernel.mm",
        "REGISTER_DISPATCH(atan2_stub",
        'static void hypot_mps_kernel(TensorIteratorBase& iter) {\n  lib.exec_binary_kernel(iter, "hypot");\n}\n\n'
        "REGISTER_DISPATCH(hypot_stub, &hypot_mps_kernel)\nREGISTER_DISPATCH(atan2_stub",
    )
    return root


def test_compare_in_process(changed_mini, mini_status):
    after = compute_status(Index(load_tree(changed_mini)))
    p = compare(mini_status, after)
    assert p.migrated == ["hypot"]
    assert p.regressed == [("exp", ["exp", "exp.out"])]
    assert p.new == [("xlogy", "metal")]
    assert p.advanced == [] and p.removed == []
    change = {k: b - a for k, (a, b) in p.kind_delta().items()}
    assert change["mpsgraph"] == 0  # hypot's two overloads left MPSGraph, exp's two arrived
    assert change["metal-shared"] == 1  # +2 hypot +1 xlogy -2 exp


def test_compare_cli_formats(changed_mini):
    d = status_json("--root", str(changed_mini), "--compare", str(MINI))
    assert d["migrated"] == ["hypot"] and d["regressed"] == [{"family": "exp", "overloads": ["exp", "exp.out"]}]
    md = run_cli("status", "--root", str(changed_mini), "--compare", str(MINI), "--format", "markdown").stdout
    assert "- **Migrated** (1): `hypot`" in md and "- **Regressed** (1): `exp` (`exp`, `exp.out`)" in md
    text = run_cli("status", "--root", str(changed_mini), "--compare", str(MINI)).stdout
    assert "Migrated families (1): hypot" in text and "New families (1, 1 with an MPS kernel): xlogy (metal)" in text


# --------------------------------------------------------------- real tree
def test_real_tree_counts_add_up():
    root = pytorch_260_root()
    d = status_json("--root", str(root))
    assert sum(d["kinds"].values()) == d["overloads"] > 2000
    assert d["kinds"]["mpsgraph"] > d["kinds"]["metal-shared"] > 0  # 2.6.0 is early in the migration
    assert d["by_category"]["unary"]["mpsgraph"] > 50  # UnaryOps.mm
    assert {h for f in d["mpsgraph_families"] for h in f["hosts"]} >= {f"{OPS}/UnaryOps.mm", f"{OPS}/BinaryOps.mm"}


# ------------------------------------------------------- HTML in Chromium
class _Dom(HTMLParser):
    """Rows of the tables and segments of the chart, from Chromium's serialised DOM."""

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, dict]] = []
        self.rows: dict[str, list[dict]] = {}
        self.segs: list[dict] = []
        self.text: dict[str, str] = {}
        self.refs: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.refs += [v for k, v in attrs if k in ("src", "href") and v]
        if tag == "link" or tag == "script":
            self.refs.append(tag)
        if tag == "tr":
            table = next((x for t, x in reversed(self.stack) if t == "table"), {})
            self.rows.setdefault(table.get("id", ""), []).append({"attrs": a, "cells": []})
        if tag in ("td", "th"):
            self._cell = []
        if tag == "rect" and a.get("class") == "seg":
            self.segs.append(a)
        self.stack.append((tag, a))
        if "id" in a:
            self.text[a["id"]] = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            table = next((x for t, x in reversed(self.stack) if t == "table"), {})
            self.rows[table.get("id", "")][-1]["cells"].append("".join(self._cell).strip())
            self._cell = None
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        for _, a in self.stack:
            if "id" in a and a["id"] in ("total", "nfamilies"):
                self.text[a["id"]] += data


def dump_dom(html: Path) -> _Dom:
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium); the HTML page is not checked")
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", html.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0 and "<html" in p.stdout, p.stderr[-2000:]
    dom = _Dom()
    dom.feed(p.stdout)
    return dom


def test_html_page_in_chromium(tmp_path):
    out = tmp_path / "status.html"
    assert run_cli("status", "--root", str(MINI), "--format", "html", "-o", str(out)).returncode == 0
    dom = dump_dom(out)
    d = status_json("--root", str(MINI))
    assert dom.refs == []  # no scripts, stylesheets, images or links: one self-contained file
    assert dom.text["total"] == str(d["overloads"])
    kinds = {r["attrs"]["data-kind"]: int(r["cells"][1]) for r in dom.rows["kinds"] if "data-kind" in r["attrs"]}
    assert kinds == d["kinds"]
    fams = [
        (r["attrs"]["data-family"], r["attrs"]["data-half"])
        for r in dom.rows["families"]
        if "data-family" in r["attrs"]
    ]
    assert fams == [(f["name"], str(int(f["half_migrated"]))) for f in d["mpsgraph_families"]]
    assert fams[0] == ("copysign", "1") and dom.text["nfamilies"] == str(len(fams))
    cats = {r["attrs"]["data-row"]: r["cells"] for r in dom.rows["categories"] if "data-row" in r["attrs"]}
    assert cats["binary"][-1] == str(sum(d["by_category"]["binary"].values()))
    assert cats["unary"][3] == str(d["by_category"]["unary"]["mpsgraph"])  # the MPSGraph column
    # the chart draws the MPS-routed kinds of each category, segment sizes are the table's numbers
    chart: dict[str, dict[str, int]] = {}
    for seg in dom.segs:
        chart.setdefault(seg["data-row"], {})[seg["data-kind"]] = int(seg["data-n"])
    routed = [k for k in KINDS if k not in ("composite", "none")]
    assert chart == {
        c: {k: n for k, n in counts.items() if k in routed}
        for c, counts in d["by_category"].items()
        if any(k in routed for k in counts)
    }
    assert chart["binary"]["metal-shared"] > chart["binary"]["mpsgraph"] > 0
    widths = {(s["data-row"], s["data-kind"]): float(s["width"]) for s in dom.segs}
    ratio = chart["binary"]["metal-shared"] / chart["binary"]["mpsgraph"]
    assert widths[("binary", "metal-shared")] == pytest.approx(ratio * widths[("binary", "mpsgraph")], rel=0.01)


def test_compare_html_in_chromium(changed_mini, tmp_path):
    out = tmp_path / "progress.html"
    assert (
        run_cli(
            "status", "--root", str(changed_mini), "--compare", str(MINI), "--format", "html", "-o", str(out)
        ).returncode
        == 0
    )
    dom = dump_dom(out)
    delta = {r["attrs"]["data-kind"]: r["cells"][1:] for r in dom.rows["delta"] if "data-kind" in r["attrs"]}
    before, after, change = delta["metal-shared"]
    assert int(after) - int(before) == 1 and change == "+1"
    assert {s["data-row"] for s in dom.segs} == {"before", "after"}


# ------------------------------------------------ sizes a new user hit on 2.6.0 (issue 14)
def test_real_tree_markdown_fits_a_github_comment_without_local_paths():
    root = pytorch_260_root()
    md = run_cli("status", "--root", str(root), "--format", "markdown").stdout
    d = status_json("--root", str(root))
    assert len(md) <= 65536, len(md)
    assert str(root) not in md and "/root/" not in md and "/home/" not in md and "/Users/" not in md
    assert f"`{root.name}`: {d['overloads']} overloads" in md
    tasks = [line for line in md.splitlines() if line.startswith("- [ ] ")]
    assert len(tasks) == len(d["mpsgraph_families"]) > 200  # every family still listed (reasons clipped)
    assert md.count("<details>") == md.count("</details>") >= 2


def test_markdown_over_the_limit_keeps_the_first_families_and_says_what_is_left(mini_status):
    from migrate.status.markdown import render_markdown

    full = render_markdown(mini_status)
    limit = len(full) - 150
    cut = render_markdown(mini_status, limit=limit)
    assert len(cut) <= limit
    tasks = [line for line in cut.splitlines() if line.startswith("- [ ] ")]
    assert 0 < len(tasks) < len(mini_status.families)
    assert tasks[0].startswith("- [ ] **copysign**")
    assert f"- … and {len(mini_status.families) - len(tasks)} more families: `mps-migrate status --format json`" in cut
    assert cut.count("<details>") == cut.count("</details>")


def test_real_tree_text_stays_within_160_columns():
    root = pytorch_260_root()
    text = run_cli("status", "--root", str(root)).stdout
    assert max(len(line) for line in text.splitlines()) <= 160
    clipped = [line for line in text.splitlines() if line.endswith("…")]
    assert len(clipped) > 10  # long port reasons are cut, ending with an ellipsis


def test_progress_text_wraps_long_lists(mini_status):
    from migrate.status.compare import Progress
    from migrate.status.text import render_progress_text

    names = [f"family_number_{i}" for i in range(300)]
    text = render_progress_text(Progress(mini_status, mini_status, names, [], [], [], []))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 160
    listed = " ".join(line.strip() for line in lines if "family_number_" in line)
    assert listed.startswith("Migrated families (300): family_number_0,")
    assert [n.strip(",") for n in listed.split()[3:]] == names


MEASURE = (
    '<script>let r = 0; for (const e of document.querySelectorAll("body *")) '
    "r = Math.max(r, e.getBoundingClientRect().right); const d = document.documentElement; "
    'document.body.dataset.fit = [d.clientWidth, d.scrollWidth, Math.ceil(r), d.scrollHeight].join(" ");</script>'
)


def chromium(*args: str) -> subprocess.CompletedProcess:
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium); the HTML page is not checked")
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    return p


def test_real_tree_html_fits_a_1280px_page(tmp_path):
    """Chromium lays the real 2.6.0 page out 1280 px wide: no element reaches past the page's right edge
    (measured by a script in a copy of the page), and a screenshot of the whole page shows nothing in its
    right margin (the body is at most 1100 px wide: a table running off the page would draw there)."""
    from tests.png import read_png

    root = pytorch_260_root()
    page = tmp_path / "status.html"
    assert run_cli("status", "--root", str(root), "--format", "html", "-o", str(page)).returncode == 0
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    dom = chromium("--window-size=1280,800", "--dump-dom", probe.resolve().as_uri()).stdout
    width, scroll_width, right, height = map(int, re.search(r'data-fit="([\d ]+)"', dom).group(1).split())
    assert width == 1280 and scroll_width <= 1280 and right <= 1140, (width, scroll_width, right)
    assert height > 2000  # the whole family table is there

    shot = tmp_path / "page.png"
    chromium(
        "--force-device-scale-factor=0.5",
        f"--window-size=1280,{height + 100}",
        f"--screenshot={shot}",
        page.resolve().as_uri(),
    )
    img = read_png(shot.read_bytes())
    scale = img.shape[1] / 1280
    assert img.shape[0] >= height * scale * 0.95
    margin = img[:, round(1145 * scale) :, :3]
    assert (margin == 255).all(), f"{int((margin != 255).any(axis=2).sum())} pixels in the right margin"
    assert (img[:, : round(1100 * scale), :3] != 255).any(axis=2).sum() > 10000  # the page did render


def test_html_names_the_tree_not_its_absolute_path(tmp_path):
    """A status page is shared (CI artifacts, PR comments): it names the tree, never the user's folders."""
    out = tmp_path / "status.html"
    assert run_cli("status", "--root", str(MINI), "--format", "html", "-o", str(out)).returncode == 0
    page = out.read_text()
    assert str(MINI.resolve()) not in page and "<code>mini</code>" in page

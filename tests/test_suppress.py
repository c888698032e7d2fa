"""The one suppression parser (migrate/suppress.py): its comment forms and what a comment covers."""

from __future__ import annotations

from migrate.config import Config
from migrate.lint import lint_tree
from migrate.suppress import scan
from migrate.tree import load_tree
from tests.helpers import OPS, YAML


def test_comment_forms():
    src = (
        b"// mps-migrate: ignore\n"
        b"void a() {}  // mps-migrate: ignore[MPS012]\n"
        b"x = 1  # mps-migrate:ignore[ MPS001 , MPS004 ]\n"
        b"/* mps-migrate: ignore[MPS011, MPS014] */ void b() {}\n"
        b"// an ordinary comment\n"
    )
    assert scan(src) == {1: {"*"}, 2: {"MPS012"}, 3: {"MPS001", "MPS004"}, 4: {"MPS011", "MPS014"}}
    assert scan(b"void f() {}\n") == {}


YAML_TEXT = """- func: a.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)  # mps-migrate: ignore[MPS003]
  dispatch:
    MPS: a_out_mps

- func: b.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    MPS: b_out_mps  # mps-migrate: ignore[MPS0]

- func: c.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    MPS: c_out_mps  # mps-migrate: ignore[MPS002]
"""
MM = """void x() {
  // mps-migrate: ignore[MPS011]
  double v = t.item<double>();
  double w = t.item<double>();
}
"""


def test_what_a_comment_covers(tmp_path):
    for rel, text in {YAML: YAML_TEXT, f"{OPS}/X.mm": MM}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = lint_tree(load_tree(tmp_path), Config(select=["MPS003", "MPS011"])).findings
    # a.out: the func: line covers the entry; b.out: a code prefix; c.out: another code suppresses nothing;
    # the line below a comment is covered, the next one is not
    assert sorted((f.code, f.line) for f in found) == [("MPS003", 11), ("MPS011", 4)]

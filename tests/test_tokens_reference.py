"""migrate.source.tokens.tokenize gives what the reference loop (tests/tokens_reference.py) gives:
the same kinds, texts, offsets, spaces and errors, on every source of the fixtures and real trees
(whole, sliced, with or without directives) and on random text built from the lexer's hard cases."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from migrate.source.tokens import tokenize
from tests.corpus import pytorch_260_root, pytorch_270a0_root
from tests.fuzzing import examples
from tests.helpers import FIXTURES, REPO
from tests.tokens_reference import reference_tokenize

SUFFIXES = (".mm", ".metal", ".h", ".cpp")
HARD = [
    '"',
    "'",
    "/*",
    "*/",
    "//",
    "\\\n",
    "\\\r\n",
    "\n",
    "\r\n",
    "\n#",
    "#",
    "##",
    " ",
    "\t",
    "@",
    "@end",
    'R"(',
    ')"',
    'R"x(',
    ')x"',
    'u8"',
    "L'",
    "LR'",
    "u",
    "R",
    ".",
    ".5",
    "1.5e+3f",
    "x",
    "int",
    "->",
    "<<=",
    "\\",
    "#define F(a) a##b",
    "#include <x>",
    '"a\\"b"',
    "'\\n'",
    "\f",
    "\v",
    "é",
    "\u0100",
    "\u00b2",
    "#x",
    "U",
    "L",
    "Lx",
    "uint",
    "*",
    "%=",
    "^",
    "~",
    "?",
    "0x1f",
]


def same(text: str, start: int = 0, end: int | None = None, directives: bool = True) -> None:
    e1: list[str] = []
    e2: list[str] = []
    got = tokenize(text, start, end, directives=directives, errors=e1)
    want = reference_tokenize(text, start, end, directives=directives, errors=e2)
    assert [(t.kind, t.text, t.start, t.space) for t in got] == [(t.kind, t.text, t.start, t.space) for t in want]
    assert e1 == e2


def sources(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file())


@pytest.mark.parametrize("root", ["fixtures", "kernels", "2.6.0", "2.7.0a0"])
def test_every_source_tokenizes_as_the_reference(root):
    base = {"2.6.0": pytorch_260_root, "2.7.0a0": pytorch_270a0_root}.get(root, lambda: REPO / root)()
    files = sources(base if root in ("fixtures", "kernels") else base / "aten/src/ATen/native/mps")
    if root == "fixtures":
        assert base == FIXTURES
    assert files
    rnd = random.Random(0)
    for f in files:
        text = f.read_bytes().decode("latin-1")
        same(text)
        same(text, directives=False)
        for _ in range(3):
            a = rnd.randrange(len(text) + 1)
            same(text, a, rnd.randrange(a, len(text) + 1))


@pytest.mark.parametrize(
    "text",
    [
        '#define S R"(a\nb)" x\ny z\n',  # a raw string begun on a directive line runs past it
        "#if 1 /* a\nb */ x\n#endif\n",
        "x \\\n#y\n  #z\n",  # a continuation is no new line
        "/* unterminated\n",
        "a'b\n#c\n",
        "x ## y # z\n  # w\n##\n",  # "#" and "##" first on a line or not
        "a\u0100b \u2028 \u0101 1\u0663 _\u00e9\u00b2 9\u00aa.\u00ff",  # word characters beyond ASCII and latin-1
        "$x `y \\ \xa0 \x85",  # characters of no kind
    ],
)
def test_edge_cases_tokenize_as_the_reference(text):
    same(text)
    same(text, directives=False)
    same(text, 1)


@settings(max_examples=examples(300))
@given(st.lists(st.sampled_from(HARD), max_size=40), st.booleans())
def test_hard_cases_tokenize_as_the_reference(parts, directives):
    same("".join(parts), directives=directives)


@settings(max_examples=examples(100))
@given(st.data())
def test_mutated_sources_tokenize_as_the_reference(data):
    files = sources(FIXTURES)
    text = list(data.draw(st.sampled_from(files)).read_bytes().decode("latin-1"))
    for _ in range(data.draw(st.integers(1, 4))):
        text.insert(data.draw(st.integers(0, len(text))), data.draw(st.sampled_from(HARD)))
    same("".join(text), directives=data.draw(st.booleans()))

"""Port's Objective-C reader reads the shared C-family token stream (migrate.source.tokens) in its own
terms: kinds, lines, offsets, NSString literals, @keywords, operators it reads in parts, and errors."""

from __future__ import annotations

import pytest

from migrate.source import objc as o


def _toks(text: str, first_line: int = 1) -> list[tuple[str, str, int, int]]:
    return [(t.kind, t.text, t.line, t.pos) for t in o.tokenize(text, first_line)]


def test_kinds_lines_and_offsets():
    text = "x = [a b:1.5f]; // c\n  y->z(0x7FEFFFFFFFFFFFFF, 'q');\n"
    assert _toks(text, 10) == [
        ("id", "x", 10, 0),
        ("op", "=", 10, 2),
        ("op", "[", 10, 4),
        ("id", "a", 10, 5),
        ("id", "b", 10, 7),
        ("op", ":", 10, 8),
        ("num", "1.5f", 10, 9),
        ("op", "]", 10, 13),
        ("op", ";", 10, 14),
        ("id", "y", 11, 23),
        ("op", "->", 11, 24),
        ("id", "z", 11, 26),
        ("op", "(", 11, 27),
        ("num", "0x7FEFFFFFFFFFFFFF", 11, 28),  # one number (the reader's own lexer once split it at "x")
        ("op", ",", 11, 46),
        ("str", "'q'", 11, 48),
        ("op", ")", 11, 51),
        ("op", ";", 11, 52),
        ("eof", "", 12, 54),
    ]


def test_an_nsstring_literal_is_one_token_and_an_at_keyword_two():
    assert _toks('@"name" @ "x" @autoreleasepool @[@1]') == [
        ("str", '@"name"', 1, 0),
        ("op", "@", 1, 8),  # spaced: no literal
        ("str", '"x"', 1, 10),
        ("op", "@", 1, 14),
        ("id", "autoreleasepool", 1, 15),
        ("op", "@", 1, 31),
        ("op", "[", 1, 32),
        ("op", "@", 1, 33),
        ("num", "1", 1, 34),
        ("op", "]", 1, 35),
        ("eof", "", 1, 36),
    ]


def test_operators_it_reads_in_parts():
    assert [t for _, t, _, _ in _toks("a...b ## c <<= d >>= e << f")][:-1] == [
        "a", ".", ".", ".", "b", "#", "#", "c", "<<", "=", "d", ">>", "=", "e", "<<", "f",
    ]  # fmt: skip
    assert [p for _, _, _, p in _toks("a...b")] == [0, 1, 2, 3, 4, 5]


def test_a_preprocessor_line_is_one_token_with_its_continuation():
    text = "int a;\n#if X \\\n  && Y\nint b;\n#endif\n"
    assert [(k, t, line) for k, t, line, _ in _toks(text)] == [
        ("id", "int", 1),
        ("id", "a", 1),
        ("op", ";", 1),
        ("pp", "#if X \\\n  && Y", 2),
        ("id", "int", 4),
        ("id", "b", 4),
        ("op", ";", 4),
        ("pp", "#endif", 5),
        ("eof", "", 6),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a\n b $ c", "line 2: unexpected character '$'"),
        ('a\n"open', "line 2: unterminated string literal"),
        ("a /* open", "line 1: unterminated comment"),
        ('a $ "open', "line 1: unexpected character '$'"),  # the first problem
        ("'open", "line 1: unterminated character literal"),
    ],
)
def test_what_it_cannot_read_is_an_error_naming_the_line(text, message):
    with pytest.raises(o.ObjcSyntaxError, match=f"^{message}$".replace("$'", "\\$'")):
        o.tokenize(text)


def test_each_text_is_read_once():
    text = "[graph additionWithPrimaryTensor:a secondaryTensor:b name:nil];"
    assert o.tokenize(text, 3) is o.tokenize(text, 3)
    assert o.tokenize(text, 4)[0].line == 4

"""A small C++ token stream for preprocessed (clang -E) Metal source.

Tokens keep the origin (file, line, column) given by the `# N "file"` line
markers, so diagnostics and rewrites map back to the user's source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

IDENT, NUMBER, STRING, CHAR, PUNCT, DIRECTIVE = "ident", "number", "string", "char", "punct", "directive"

# Longest punctuators first. `>>` is deliberately NOT a token: template
# argument lists are closed one `>` at a time, shifts are two adjacent `>`.
_PUNCTS = [
    "<<=",
    ">>=",
    "...",
    "->*",
    "::",
    "->",
    "++",
    "--",
    "<<",
    "<=",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "|=",
    "^=",
    ".*",
    "##",
]
_LEX = re.compile(
    r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>(?:u8|u|U|L)?R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)"|(?:u8|u|U|L)?"(?:[^"\\\n]|\\.)*")
  | (?P<char>(?:u8|u|U|L)?'(?:[^'\\\n]|\\.)*')
  | (?P<number>\.?[0-9](?:[eEpP][+-]|[0-9a-zA-Z_.'])*)
  | (?P<ident>[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<punct>"""
    + "|".join(re.escape(p) for p in _PUNCTS)
    + r"""|[^\sA-Za-z0-9_])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(slots=True)
class Token:
    kind: str
    text: str
    file: str
    line: int
    col: int


def _line_marker(text: str) -> tuple[int, str] | None:
    """`# 12 "file" 1 3` or `#line 12 "file"` -> (12, file)."""
    body = text[1:].strip()
    if body.startswith("line"):
        body = body[4:].strip()
    parts = body.split(None, 1)
    if not parts or not parts[0].isdigit():
        return None
    line = int(parts[0])
    rest = parts[1] if len(parts) > 1 else ""
    if rest.startswith('"'):
        end = rest.find('"', 1)
        while end > 0 and rest[end - 1] == "\\":
            end = rest.find('"', end + 1)
        return line, rest[1:end] if end > 0 else rest[1:]
    return line, ""


def tokenize(text: str, file: str = "<source>") -> list[Token]:
    """Tokenize preprocessed C++; line markers update origins, other
    directives (e.g. #pragma) become DIRECTIVE tokens."""
    tokens: list[Token] = []
    pos, n = 0, len(text)
    line, line_start, cur_file = 1, 0, file
    at_line_start = True
    while pos < n:
        if at_line_start:
            # directive: '#' first non-blank on the line
            j = pos
            while j < n and text[j] in " \t":
                j += 1
            if j < n and text[j] == "#":
                end = text.find("\n", j)
                while end != -1 and text[end - 1] == "\\":
                    end = text.find("\n", end + 1)
                end = n if end == -1 else end
                directive = text[j:end]
                marker = _line_marker(directive)
                if marker is not None:
                    line, name = marker
                    if name:
                        cur_file = name
                    pos, line_start = end + 1, end + 1
                    continue
                tokens.append(Token(DIRECTIVE, directive.replace("\\\n", " "), cur_file, line, j - line_start + 1))
                line += directive.count("\n") + 1
                pos, line_start = end + 1, end + 1
                continue
            at_line_start = False
        m = _LEX.match(text, pos)
        if m is None:  # unreachable: the last alternative takes any char
            pos += 1
            continue
        kind = m.lastgroup
        s = m.group()
        if kind == "nl":
            line += 1
            line_start = m.end()
            at_line_start = True
        elif kind == "ws":
            pass
        elif kind == "comment":
            nls = s.count("\n")
            if nls:
                line += nls
                line_start = pos + s.rfind("\n") + 1
        else:
            if kind == "delim":
                kind = STRING
            tokens.append(Token(kind, s, cur_file, line, pos - line_start + 1))
            if kind == STRING and "\n" in s:
                line += s.count("\n")
                line_start = pos + s.rfind("\n") + 1
        pos = m.end()
    return tokens


def is_float_literal(text: str) -> bool:
    t = text.lower()
    if t.startswith("0x"):
        return "p" in t
    body = t.rstrip("fhl")
    return "." in body or "e" in body


def render(tokens: list[Token]) -> str:
    """Tokens back to text, keeping each token on its origin line (line
    markers where the origin jumps)."""
    out: list[str] = []
    cur_file, cur_line = None, 0
    prev: Token | None = None
    for t in tokens:
        if (
            prev is not None
            and t.text[0] == ">"
            and prev.text == ">"
            and t.kind == PUNCT
            and t.line == prev.line
            and t.col == prev.col + 1
            and t.file == prev.file
            and out[-1] == " "
        ):
            out.pop()  # `a >> b` was lexed as two `>`
        prev = t
        if t.file != cur_file or t.line < cur_line or t.line > cur_line + 8:
            out.append(f'\n# {t.line} "{t.file}"\n')
            cur_file, cur_line = t.file, t.line
        elif t.line > cur_line:
            out.append("\n" * (t.line - cur_line))
            cur_line = t.line
        if t.kind == DIRECTIVE:
            out.append("\n" + t.text + "\n")
            cur_file, cur_line = t.file, t.line + 1
            out.append(f'# {cur_line} "{cur_file}"\n')
            continue
        out.append(t.text)
        out.append(" ")
    out.append("\n")
    return "".join(out)

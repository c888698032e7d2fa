"""MPS018: fast-math in Metal code: ``fast::``/``metal::fast::`` calls and fast math-mode pragmas;
in host code, a compile option that turns fast math on unconditionally."""
import re

from migrate.model import Span
from migrate.read.cpp_lex import scrub
from migrate.read.metal_flow import units

HOST = re.compile(rb"setFastMathEnabled\s*:\s*(?:YES|true)\b|\bfastMathEnabled\s*=\s*(?:YES|true)\b"
                  rb"|\bmathMode\s*=\s*MTLMathModeFast\b")

PRAGMA = re.compile(r"#\s*pragma\s+METAL\s+fp\s+(?:math_mode\s*\(\s*(?:fast|relaxed)\s*\)|fast_math\b)|-ffast-math")


def check(ix, rule):
    for unit in units(ix):
        toks = unit.toks
        for k, t in enumerate(toks):
            if t.kind == "dir":
                m = PRAGMA.search(t.text)
                if m:
                    yield rule.finding(unit.span(t.start + m.start(), t.start + m.end()), detail=m.group(), kernel=None)
            elif (t.kind == "id" and t.text == "fast" and k + 2 < len(toks) and toks[k + 1].text == "::"
                  and toks[k + 2].kind == "id" and not (k and toks[k - 1].text in (".", "->"))):
                first = k - 2 if k >= 2 and toks[k - 1].text == "::" and toks[k - 2].text == "metal" else k
                first -= 1 if first and toks[first - 1].text == "::" else 0
                yield rule.finding(unit.tok_span(first, k + 3), detail="".join(x.text for x in toks[first:k + 3]),
                                   kernel=None)
    for path, hf in sorted(ix.tree.hosts.items()):
        data = ix.tree.sources.get(path, b"")
        if not ix.in_scope(path) or b"FastMath" not in data and b"MTLMathModeFast" not in data:
            continue
        code = scrub(data).code
        for m in HOST.finditer(code):
            line = code.count(b"\n", 0, m.start()) + 1
            col = m.start() - (code.rfind(b"\n", 0, m.start()) + 1) + 1
            span = Span(path, line, col, line, col + m.end() - m.start(), m.start(), m.end())
            yield rule.finding(span, detail=m.group().decode(), kernel=None)

"""MPS018 fast-math: fast-math in Metal code: ``fast::``/``metal::fast::`` calls and fast math-mode pragmas;
in host code, a compile option that turns fast math on unconditionally.

Severity: warning. Reads: . Fix safety: none.

## What it does
Finds `fast::` and `metal::fast::` calls in Metal sources (`.metal` files and
Metal raw strings of host files) and `#pragma METAL fp math_mode(fast)` /
`(relaxed)` / `fp fast_math` lines; in host code, a library compile option
that turns fast math on unconditionally (`setFastMathEnabled:YES`,
`mathMode = MTLMathModeFast`).

## Why it matters
Fast math is within tolerance for one op, but its error compounds over a
training run, and the CPU backend of `verify` cannot model Apple's fast
precision. It is on the review checklist proposed upstream for MPS kernels.
(The opt-in `PYTORCH_MPS_FAST_MATH` compile option of the host,
`fast_math ? MTLMathModeFast : MTLMathModeSafe`, is not reported: it is the
user's choice.)

## Example
out[i] = fast::exp(x[i]);   // MPS018

## Fix
None automatic: use `metal::precise::` or the plain function.
"""

from migrate.rulebook import Rule
import re

from migrate.read.metal_flow import units

PRAGMA = re.compile(r"#\s*pragma\s+METAL\s+fp\s+(?:math_mode\s*\(\s*(?:fast|relaxed)\s*\)|fast_math\b)|-ffast-math")


def check(ix):
    for unit in units(ix):
        toks = unit.toks
        if not toks or not any(unit.text.find(w, toks[0].start, toks[-1].end) >= 0 for w in ("fast", "relaxed")):
            continue  # neither a fast:: call nor a fast-math pragma can be there
        for k, t in enumerate(toks):
            if t.kind == "dir":
                m = PRAGMA.search(t.text)
                if m:
                    yield RULE.finding(unit.span(t.start + m.start(), t.start + m.end()), message(m.group()))
            elif (
                t.kind == "id"
                and t.text == "fast"
                and k + 2 < len(toks)
                and toks[k + 1].text == "::"
                and toks[k + 2].kind == "id"
                and not (k and toks[k - 1].text in (".", "->"))
            ):
                first = k - 2 if k >= 2 and toks[k - 1].text == "::" and toks[k - 2].text == "metal" else k
                first -= 1 if first and toks[first - 1].text == "::" else 0
                yield RULE.finding(unit.tok_span(first, k + 3), message("".join(x.text for x in toks[first : k + 3])))
    for site in sorted(ix.sites("fast_math"), key=lambda s: (s.path, s.span.start)):
        if ix.in_scope(site.path):
            yield RULE.finding(site.span, message(site.detail))


def message(detail: str) -> str:
    return f"{detail}: fast math in a kernel (error compounds in training)"


RULE = Rule.documented(__name__, message, check)

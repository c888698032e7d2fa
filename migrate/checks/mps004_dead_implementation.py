"""MPS004: an MPS implementation nothing references any more."""


def check(ix, rule):
    for f in ix.dead_functions:
        span = f.invocation or f.span
        yield rule.finding(span, kernel=f.name, fix=ix.fixes.remove_function(f))


"""MPS004: an MPS implementation nothing references any more."""


def check(ix, rule):
    for f in ix.dead_functions:
        if any(p != f.path for p in ix.hidden_in("host", f.name)):
            continue  # another host file that could not be read may use it
        span = f.invocation or f.span
        yield rule.finding(span, kernel=f.name, fix=ix.fixes.remove_function(f))


"""MPS008: a functor registered for part of its dtype family."""
from migrate.tables import dtype_family

FLOAT_OUT = set(dtype_family("float"))


def check(ix, rule):
    floats = dtype_family("float")
    ints = dtype_family("integral")
    for op, regs in ix.functor_registrations.items():
        inputs = {r.dtypes[0] for r in regs if r.dtypes}
        last = max(regs, key=lambda r: (r.path, r.span.start))
        missing_float = [t for t in floats if t not in inputs]
        if inputs & set(floats) and missing_float:
            yield rule.finding(last.span, kernel=op, missing=", ".join(missing_float), family="float")
        int2float = {r.dtypes[0] for r in regs if len(r.dtypes) > 1 and r.dtypes[0] in ints and r.dtypes[-1] in FLOAT_OUT}
        missing_int = [t for t in ints if t not in inputs]
        if int2float and missing_int:
            yield rule.finding(last.span, kernel=op, missing=", ".join(missing_int), family="int-to-float")

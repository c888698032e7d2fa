"""MPS008: a functor registered for part of its dtype family."""
from migrate.model import Severity
from migrate.rulebook import Doc, FixSafety, Rule
from migrate.tables import dtype_family

FLOAT_OUT = set(dtype_family("float"))


def check(ix):
    floats = dtype_family("float")
    ints = dtype_family("integral")
    for op, regs in ix.functor_registrations.items():
        inputs = {r.dtypes[0] for r in regs if r.dtypes}
        last = max(regs, key=lambda r: (r.path, r.span.start))
        missing_float = [t for t in floats if t not in inputs]
        if inputs & set(floats) and missing_float:
            yield RULE.finding(last.span, message(op, ", ".join(missing_float), "float"), kernel=op, family="float")
        int2float = {r.dtypes[0] for r in regs if len(r.dtypes) > 1 and r.dtypes[0] in ints and r.dtypes[-1] in FLOAT_OUT}
        missing_int = [t for t in ints if t not in inputs]
        if int2float and missing_int:
            yield RULE.finding(last.span, message(op, ", ".join(missing_int), "int-to-float"), kernel=op,
                               family="int-to-float")


def message(kernel: str, missing: str, family: str) -> str:
    return f"functor {kernel} is registered without {missing} ({family} family)"


RULE = Rule(
    code="MPS008", name="missing-dtype", severity=Severity.WARNING, reads=("metal",),
    message=message, check=check,
    doc=Doc(
        summary="""\
Finds functors registered for part of a dtype family: float without half or
bfloat, or math binaries taking some integer inputs but not all.
""",
        why="""\
The missing dtype falls back to an error at run time ("not implemented for
'BFloat16'") or to a slow path, and OpInfo tests stay expected-failure.
""",
        example="""\
REGISTER_BINARY_OP(xlogy, float, float);
REGISTER_BINARY_OP(xlogy, half, half);     // MPS008: bfloat missing
""",
        fix="""\
None automatic: add the registration for the missing dtype.
""",
        fix_safety=FixSafety.NONE,
    ),
)

"""MPS014: host sites of kind "setbytes_chain" recorded by the host reader."""

from migrate.model import Severity
from migrate.rulebook import Doc, FixSafety, Rule


def check(ix):
    for site in ix.sites("setbytes_chain"):
        yield RULE.finding(site.span, message(site.detail), kernel=site.function)


def message(detail: str) -> str:
    return f"{detail}: a chain of mtl_setBytes calls that one mtl_setArgs call does"


RULE = Rule(
    code="MPS014",
    name="setbytes-chain",
    severity=Severity.ADVICE,
    reads=("host",),
    message=message,
    check=check,
    doc=Doc(
        summary="""\
Finds two or more consecutive `mtl_setBytes(encoder, x, N)` statements.
""",
        why="""\
`mtl_setArgs<N>(encoder, a, b, c)` binds arguments in order in one call and
cannot get an index wrong.
""",
        example="""\
mtl_setBytes(encoder, sizes, 2);
mtl_setBytes(encoder, strides, 3);   // MPS014
""",
        fix="""\
None automatic.
""",
        fix_safety=FixSafety.NONE,
    ),
)

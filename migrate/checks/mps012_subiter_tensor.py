"""MPS012: host sites of kind "subiter_tensor" recorded by the host reader."""

from migrate.model import Severity
from migrate.rulebook import Doc, FixSafety, Rule


def check(ix):
    for site in ix.sites("subiter_tensor"):
        yield RULE.finding(site.span, message(site.detail), kernel=site.function)


def message(detail: str) -> str:
    return f"{detail} inside a with_32bit_indexing() loop addresses the whole tensor, not the sub-iterator"


RULE = Rule(
    code="MPS012",
    name="subiterator-whole-tensor",
    severity=Severity.ERROR,
    reads=("host",),
    message=message,
    check=check,
    doc=Doc(
        summary="""\
Inside `for (auto&& sub : iter.with_32bit_indexing())`, finds bindings of
`sub.tensor(N)` and dispatch sizes from `sub.tensor(N).numel()`.
""",
        why="""\
`tensor(N)` of a sub-iterator is the WHOLE tensor: every sub-iterator then
overwrites the same prefix. Use `bind_iter_tensors(encoder, sub, n)` and
dispatch `sub.numel()`.
""",
        example="""\
for (auto&& sub : iter.with_32bit_indexing()) {
  mtl_setArgs(encoder, sub.tensor(0), sub.tensor(1));   // MPS012
}
""",
        fix="""\
None automatic.
""",
        fix_safety=FixSafety.NONE,
    ),
)

"""MPS013: host sites of kind "narrow_numel" recorded by the host reader."""

from migrate.model import Severity
from migrate.rulebook import Doc, FixSafety, Rule


def check(ix):
    for site in ix.sites("narrow_numel"):
        yield RULE.finding(site.span, message(site.detail), kernel=site.function)


def message(detail: str) -> str:
    return f"{detail} narrows a numel to 32 bits without c10::checked_convert"


RULE = Rule(
    code="MPS013",
    name="unchecked-numel-narrowing",
    severity=Severity.WARNING,
    reads=("host",),
    message=message,
    check=check,
    doc=Doc(
        summary="""\
Finds `uint32_t n = t.numel()`, `static_cast<uint32_t>(t.numel())` and
similar narrowing of element counts.
""",
        why="""\
Above 2^32 elements the count wraps silently and the kernel touches only a
prefix (seen upstream: pytorch#156100, #187788).
""",
        example="""\
uint32_t length = output.numel();   // MPS013
""",
        fix="""\
None automatic: `c10::checked_convert<uint32_t>(output.numel(), "uint32_t")`.
""",
        fix_safety=FixSafety.NONE,
    ),
)

"""What a rule is: code, name, severity, documentation, message, check (one module each under migrate/checks/)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from migrate.model import Finding, Fix, Severity, Span, instance

SEVERITIES = tuple(s.value for s in Severity)  # error, warning, advice


class FixSafety(StrEnum):
    SAFE = "safe"  # applied by --fix
    UNSAFE = "unsafe"  # applied by --fix --unsafe-fixes
    MIXED = "mixed"  # safe where the rule can prove the edit right, else unsafe (the fix text says when)
    NONE = "none"  # no automatic fix


@dataclass(frozen=True)
class Doc:
    """A rule's documentation, as `rule MPSNNN` prints it."""

    summary: str  # what it finds; its first sentence is the rule list's
    why: str
    example: str
    fix: str = "No automatic fix."
    fix_safety: FixSafety = FixSafety.NONE


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    doc: Doc
    message: Callable[..., str]  # the finding's message from typed arguments
    check: Callable[..., Iterable[Finding]] | None  # check(index) -> findings; None: reported by lint itself
    reads: tuple[str, ...] = ()  # kinds of files its findings depend on (migrate.tree.file_kind)

    def finding(
        self,
        span: Span,
        message: str,
        *,
        overload: str | None = None,
        kernel: str | None = None,
        fix: Fix | None = None,
        family: str | None = None,
    ) -> Finding:
        return instance(  # ~1k a lint: without Finding.__init__
            Finding,
            {
                "code": self.code,
                "message": message,
                "span": span,
                "severity": self.severity,
                "overload": overload,
                "kernel": kernel,
                "fix": fix,
                "extra": (),
                "family": family,
            },
        )

    def run(self, index) -> list[Finding]:
        return list(self.check(index)) if self.check else []

    @property
    def fix_safety(self) -> FixSafety:
        return self.doc.fix_safety

    @property
    def message_template(self) -> str:
        """The message with each argument shown as ``{name}``."""
        params = inspect.signature(self.message).parameters
        return self.message(**{p: f"{{{p}}}" for p in params})

    def text(self) -> str:
        d = self.doc
        parts = [
            f"# {self.code} ({self.name})",
            "",
            f"Default severity: {self.severity}",
            "",
            "## What it does",
            d.summary.strip(),
            "",
            "## Why it matters",
            d.why.strip(),
            "",
            "## Example",
            d.example.rstrip(),
            "",
            "## Fix",
            f"{d.fix.strip()} (fix safety: {d.fix_safety})",
        ]
        return "\n".join(parts) + "\n"

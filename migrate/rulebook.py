"""What a rule is: code, name, severity, documentation, message, check (one module each under migrate/checks/)."""

from __future__ import annotations

import ast
import inspect
import re
import sys
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


_TITLE = re.compile(r"(MPS\d{3}) ([a-z0-9-]+): ")
_META = re.compile(r"^Severity: (\w+)\. Reads: ([\w, ]*)\. Fix safety: (\w+)\.$", re.M)
_SECTIONS = {"What it does": "summary", "Why it matters": "why", "Example": "example", "Fix": "fix"}


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

    @classmethod
    def documented(cls, module: str, message: Callable[..., str], check=None, *, sites: str = "") -> Rule:
        """The rule a check module's docstring describes (``from_doc``). ``sites``: its check reports each host
        site of that kind the host reader records (migrate/read/host_sites.py), the message taking its detail."""
        mod = sys.modules[module]
        doc = mod.__doc__  # None under python -OO: read from the source
        if doc is None:
            with open(mod.__file__, encoding="utf-8") as f:
                doc = ast.get_docstring(ast.parse(f.read()), clean=False) or ""
        if sites:

            def check(ix):
                for site in ix.sites(sites):
                    yield rule.finding(site.span, message(site.detail), kernel=site.function)

        rule = cls.from_doc(doc, message, check, module)
        return rule

    @classmethod
    def from_doc(cls, doc: str, message: Callable[..., str], check, where: str = "") -> Rule:
        """A rule from its documentation, as its check module's docstring writes it (``rule MPSNNN`` prints the
        same sections)::

            MPSNNN rule-name: one line for developers (more paragraphs may follow).

            Severity: warning. Reads: yaml, host. Fix safety: safe.

            ## What it does / ## Why it matters / ## Example / ## Fix   (each a section)
        """
        head, *parts = re.split(r"^## ", doc, flags=re.M)
        title, meta = _TITLE.match(head), _META.search(head)
        if not (title and meta):
            raise ValueError(f"{where}: a rule's docstring opens 'MPSNNN name: ...' and has a '{_META.pattern}' line")
        sections: dict[str, str] = {}
        for part in parts:
            heading, _, body = part.partition("\n")
            if heading.strip() not in _SECTIONS:
                raise ValueError(f"{where}: unknown section '## {heading.strip()}' (known: {', '.join(_SECTIONS)})")
            sections[_SECTIONS[heading.strip()]] = body.strip("\n") + "\n"
        reads = tuple(r.strip() for r in meta[2].split(",") if r.strip())
        try:
            severity, safety = Severity(meta[1]), FixSafety(meta[3])
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        return cls(title[1], title[2], severity, Doc(**sections, fix_safety=safety), message, check, reads)

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

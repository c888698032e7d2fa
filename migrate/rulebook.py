"""Rule metadata, read from rules/MPS*.yaml (code, name, severity, message, docs)."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache


from migrate.tables import load_yaml_bytes

from migrate.model import Finding, Fix, Span
from migrate.resources import rules_dir

SEVERITIES = ("error", "warning", "advice")


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    message: str  # str.format template
    summary: str
    why: str
    example: str
    fix: str
    fix_safety: str  # safe | unsafe | none
    check: str | None  # module under migrate.checks
    reads: tuple[str, ...] = ()  # kinds of files its findings depend on (migrate.tree.file_kind)

    def finding(self, span: Span, *, overload: str | None = None, kernel: str | None = None,
                fix: Fix | None = None, family: str | None = None, **fmt) -> Finding:
        return Finding(family=family,
            code=self.code, message=self.message.format(overload=overload, kernel=kernel, family=family, **fmt),
            path=span.path, line=span.line, column=span.column, end_line=span.end_line,
            end_column=span.end_column, severity=self.severity, overload=overload, kernel=kernel, fix=fix,
        )

    def run(self, index) -> list[Finding]:
        if not self.check:
            return []
        mod = importlib.import_module(f"migrate.checks.{self.check}")
        return list(mod.check(index, self))

    def doc(self) -> str:
        parts = [f"# {self.code} ({self.name})", "", f"Default severity: {self.severity}", "",
                 "## What it does", self.summary.strip(), "", "## Why it matters", self.why.strip(), "",
                 "## Example", self.example.rstrip(), "", "## Fix", f"{self.fix.strip()} (fix safety: {self.fix_safety})"]
        return "\n".join(parts) + "\n"


@lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    rules = {}
    for f in sorted(rules_dir().glob("MPS*.yaml")):
        d = load_yaml_bytes(f.name, f.read_bytes())
        rules[d["code"]] = Rule(
            code=d["code"], name=d["name"], severity=d["severity"], message=d["message"],
            summary=d["summary"], why=d["why"], example=d["example"], fix=d.get("fix", "No automatic fix."),
            fix_safety=d.get("fix_safety", "none"), check=d.get("check"), reads=tuple(d.get("reads") or ()),
        )
    return rules

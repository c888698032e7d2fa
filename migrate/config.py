"""Configuration: ``[tool.mps-migrate]`` in the tree's pyproject.toml or ``.mps-migrate.toml``."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

from migrate.errors import UsageError
from migrate.registry import all_rules
from migrate.rulebook import SEVERITIES

KNOWN = {"select", "ignore", "per-file-ignores", "severity", "extend-select"}


@dataclass
class Config:
    select: list[str] = field(default_factory=lambda: ["MPS"])
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    severity: dict[str, str] = field(default_factory=dict)
    source: str | None = None

    def apply_flags(self, select=None, extend_select=(), ignore=None, extend_ignore=()) -> Config:
        """Command-line flags win over the file: --select/--ignore replace, --extend-* add."""
        for flag, value in (
            ("--select", select),
            ("--extend-select", extend_select),
            ("--ignore", ignore),
            ("--extend-ignore", extend_ignore),
        ):
            if value:  # an empty list names no code to check
                check_codes(list(value), flag)
        if select is not None:
            self.select = list(select)
        self.select += list(extend_select)
        if ignore is not None:
            self.ignore = list(ignore)
        self.ignore += list(extend_ignore)
        return self

    def enabled(self, code: str) -> bool:
        def hit(prefixes):
            return max((len(p) for p in prefixes if code.startswith(p)), default=-1)

        return hit(self.select) > hit(self.ignore)

    def ignored_in(self, code: str, path: str) -> bool:
        for pattern, codes in self.per_file_ignores.items():
            if fnmatch.fnmatch(path, pattern) and any(code.startswith(c) for c in codes):
                return True
        return False


def check_codes(value, where: str) -> list[str]:
    """Rule codes or prefixes, each matching some rule: a typo is an error, never a silent no-op."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where} must be a list of rule codes or prefixes")
    rules = all_rules()
    for v in value:
        if not v or not any(code.startswith(v) for code in rules):
            hint = (
                f" (codes are upper case: {v.upper()!r})" if v and any(c.startswith(v.upper()) for c in rules) else ""
            )
            raise UsageError(f"{where}: unknown rule code or prefix {v!r}{hint}")
    return value


def load_config(root: Path) -> Config:
    for name, table_path in ((".mps-migrate.toml", ()), ("pyproject.toml", ("tool", "mps-migrate"))):
        f = root / name
        if not f.is_file():
            continue
        import tomllib

        try:
            data = tomllib.loads(f.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"invalid TOML: {exc}", str(f)) from None
        if not table_path and set(data) == {"tool"}:  # the pyproject form pasted into .mps-migrate.toml
            table_path = ("tool", "mps-migrate")
        for key in table_path:
            data = data.get(key, {}) if isinstance(data, dict) else {}
        if not data and table_path:
            continue
        return _from_table(data, str(f))
    return Config()


def _from_table(data: dict, where: str) -> Config:
    unknown = set(data) - KNOWN
    if unknown:
        raise UsageError(f"unknown setting(s): {', '.join(sorted(unknown))}", where)
    cfg = Config(source=where)
    if "select" in data:
        cfg.select = check_codes(data["select"], f"{where}: select")
    if "extend-select" in data:
        cfg.select += check_codes(data["extend-select"], f"{where}: extend-select")
    if "ignore" in data:
        cfg.ignore = check_codes(data["ignore"], f"{where}: ignore")
    for pattern, codes in (data.get("per-file-ignores") or {}).items():
        cfg.per_file_ignores[pattern] = check_codes(codes, f"{where}: per-file-ignores")
    for code, sev in (data.get("severity") or {}).items():
        if code not in all_rules():
            raise UsageError(f"severity: unknown rule {code!r}", where)
        if sev not in SEVERITIES:
            raise UsageError(f"severity of {code} must be one of {', '.join(SEVERITIES)}", where)
        cfg.severity[code] = sev
    return cfg

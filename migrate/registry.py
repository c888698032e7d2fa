"""Every rule by code. The registry (migrate.checks) is imported on first use: a warm lint answers from its
result cache without loading the rules."""

from __future__ import annotations

from functools import lru_cache

from migrate.rulebook import Rule


@lru_cache(maxsize=1)
def all_rules() -> dict[str, Rule]:
    """Every rule by code, in the order of the registry (migrate.checks.RULES)."""
    from migrate.checks import RULES

    return {r.code: r for r in RULES}

"""One cell of a verify report: a (dtype, layout) and what its cases gave (run.py fills it, large.py adds the
cells past 2^31 elements, report.py prints it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate.verify.compare import Stats
from migrate.verify.compile_step import CompileFailure
from migrate.verify.expectations import Expectation


@dataclass
class Cell:
    dtype: str
    layout: str
    cases: int = 0
    kernels: set[str] = field(default_factory=set)
    stats: Stats = field(default_factory=Stats)  # kernel vs the primary reference
    old_vs_cpu: Stats | None = None  # the two references against each other
    skipped: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # launch errors, missing kernels, modified inputs
    passed: int = 0  # cases whose every launch matched and left the inputs alone
    samples: int = 0  # OpInfo cells: samples drawn (ran + skipped)
    skip_reasons: dict[str, int] = field(default_factory=dict)  # OpInfo cells: reason -> samples skipped
    blocked: CompileFailure | None = None  # the kernel file does not compile (reported once, at the top)
    expected: Expectation | None = None  # OpInfo cells: the tree's own xfail/skip of this op and dtype

    @property
    def status(self) -> str:
        if self.blocked is not None:
            return "BLOCKED"
        failed = bool(self.failures or not self.stats.ok)
        if self.expected is not None and (failed or self.expected.kind == "xfail"):
            if failed:
                return "XFAIL"  # test_mps expects it (a skip: test_mps never runs it)
            if self.cases:
                return "XPASS"  # an expected failure passes: the expectation is stale
        if failed:
            return "FAIL"
        return "skip" if self.cases == 0 else "pass"

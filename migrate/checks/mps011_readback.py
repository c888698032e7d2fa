"""MPS011 gpu-readback: host code reads a GPU tensor back (.item(), .cpu(), item<T>()) inside an MPS op.

Not reported when the read sits inside an ``if`` that established the tensor is on
the CPU (``!t.is_mps()``, ``t.is_cpu()``): reading a CPU scalar costs no sync.

Severity: warning. Reads: host. Fix safety: none.

## What it does
Finds `.item()`, `.cpu()` and `item<T>()` calls in MPS host code.

## Why it matters
A read-back drains the whole command stream. Report errors from the kernel
with `TORCH_REPORT_ERROR` (c10/metal/error.h) instead.

## Example
TORCH_CHECK(index.max().item<int64_t>() < n);   // MPS011

## Fix
None automatic.
"""

from migrate.rulebook import Rule
import re

_RECEIVER = re.compile(rb"(\w+)\s*$")


def check(ix):
    for site in ix.sites("readback"):
        if _guarded_cpu(ix.tree.sources.get(site.path, b""), site.span.start, ix, site):
            continue
        yield RULE.finding(site.span, message(site.detail, site.function), kernel=site.function)


def _guarded_cpu(data: bytes, pos: int, ix, site) -> bool:
    m = _RECEIVER.search(data[max(0, pos - 80) : pos])
    if not m:
        return False
    start = _function_start(ix, site)
    if not any(data.find(m.group(1) + test, start, pos) >= 0 for test in (b".is_mps()", b".is_cpu()")):
        return False  # no test of the receiver's device before the read: no guard to compile
    recv = re.escape(m.group(1))
    guard = re.compile(rb"\bif\s*\((?:[^;{]*?)(?:!\s*" + recv + rb"\.is_mps\(\)|\b" + recv + rb"\.is_cpu\(\))[^;{]*\{")
    for g in guard.finditer(data, start, pos):
        depth = 1
        for ch in data[g.end() : pos]:
            depth += ch == ord("{")
            depth -= ch == ord("}")
            if depth == 0:
                break
        if depth > 0:
            return True
    return False


def _function_start(ix, site) -> int:
    for f in ix.functions.get(site.function or "", ()):
        if f.path == site.path and f.span.start <= site.span.start < f.span.end:
            return f.span.start
    return max(0, site.span.start - 4000)


def message(detail: str, kernel: str) -> str:
    return f"{detail} reads a GPU tensor back to the host inside MPS op {kernel}"


RULE = Rule.documented(__name__, message, check)

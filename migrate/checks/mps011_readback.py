"""MPS011: host code reads a GPU tensor back (.item(), .cpu(), item<T>()) inside an MPS op.

Not reported when the read sits inside an ``if`` that established the tensor is on
the CPU (``!t.is_mps()``, ``t.is_cpu()``): reading a CPU scalar costs no sync.
"""
import re

_RECEIVER = re.compile(rb"(\w+)\s*$")


def check(ix, rule):
    for site in ix.sites("readback"):
        if _guarded_cpu(ix.tree.sources.get(site.path, b""), site.span.start, ix, site):
            continue
        yield rule.finding(site.span, kernel=site.function, detail=site.detail)


def _guarded_cpu(data: bytes, pos: int, ix, site) -> bool:
    m = _RECEIVER.search(data[max(0, pos - 80):pos])
    if not m:
        return False
    recv = re.escape(m.group(1))
    guard = re.compile(rb"\bif\s*\((?:[^;{]*?)(?:!\s*" + recv + rb"\.is_mps\(\)|\b" + recv + rb"\.is_cpu\(\))[^;{]*\{")
    start = _function_start(ix, site)
    for g in guard.finditer(data, start, pos):
        depth = 1
        for ch in data[g.end():pos]:
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

"""Parse many files at once: cached models from the parse cache, the rest on the machine's cores.

A job is ``(kind, path, data, reader, kwargs, extra)``: ``reader`` is ``"module:function"``,
called as ``function(data, path, **kwargs)``; ``kind``, ``path``, ``data`` and ``extra`` key the
parse cache as ``cache.cached`` does.  When there are enough uncached bytes for the start-up to
pay and idle cores to run them (a loaded machine parses faster in one process), the jobs are
split by estimated cost: this process parses one share while forked children (Linux only: a
fork needs no re-import) parse the others and send their models back in migrate.codec form
(tree-sitter objects never cross a process).  A child that fails leaves its share to this
process.  ``MPS_MIGRATE_JOBS=N`` sets the number of processes (1: this one only).
"""

from __future__ import annotations

import importlib
import os
import sys

from migrate import cache

MIN_PARALLEL_BYTES = 256 * 1024  # uncached bytes, besides the largest file, worth a second process
# Without MPS_MIGRATE_JOBS, a second process needs this many idle cores.  On the 2-core VM of the
# README's measurements a second process saves a third of the parse when both cores are free, and costs
# more than it saves when another process keeps one busy (the load average tells those apart).
MIN_AUTO_IDLE = 2
COST_PER_BYTE = {"yaml": 0.5, "metal": 2.0}  # relative to host sources (measured on the 2.6.0 tree)
# Kinds parsed in this process only: the yaml's model (20k objects) costs more to encode and decode than
# to parse, and a Metal file's token stream (source.source_file) serves the review rules' flow analysis
# later, here or in a rule_pool child forked from here (a child's would be lost).
LOCAL_KINDS = frozenset({"yaml", "metal"})
CHILD_OVERHEAD = 1.2  # a child's share costs this much more: it encodes its models, this process decodes them


def _parse(job):
    kind, path, data, reader, kwargs, extra = job
    module, _, name = reader.partition(":")
    return getattr(importlib.import_module(module), name)(data, path, **kwargs)


def _cost(job) -> float:
    return len(job[2]) * COST_PER_BYTE.get(job[0], 1.0)


def _workers(jobs: list) -> int:
    if len(jobs) < 2:
        return 1
    sizes = sorted(len(j[2]) for j in jobs)
    if sum(sizes[:-1]) < MIN_PARALLEL_BYTES:
        return 1
    return min(idle_workers(), len(jobs))


def idle_workers() -> int:
    """Processes worth running: ``MPS_MIGRATE_JOBS``, else the cores other processes leave idle when there
    are MIN_AUTO_IDLE of them (1 off Linux)."""
    if sys.platform != "linux":
        return 1
    wanted = os.environ.get("MPS_MIGRATE_JOBS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    idle = cores - int(os.getloadavg()[0])  # a loaded machine parses faster in one process
    return min(idle, 8) if idle >= MIN_AUTO_IDLE else 1


def parse_all(jobs: list) -> list:
    """The model of every job, in order."""
    models = [cache.lookup(kind, path, data, *extra) for kind, path, data, _, _, extra in jobs]
    todo = [k for k, m in enumerate(models) if m is None]
    local = [k for k in todo if jobs[k][0] in LOCAL_KINDS]
    rest = [k for k in todo if jobs[k][0] not in LOCAL_KINDS]
    mine, *theirs = shares(
        rest, [_cost(jobs[k]) for k in rest], _workers([jobs[k] for k in todo]), sum(_cost(jobs[k]) for k in local)
    )
    mine = sorted(mine + local)
    children = [_fork(share, jobs) for share in theirs]
    for k in mine:
        models[k] = _parse_cached(jobs[k])
    for share, child in zip(theirs, children):
        blobs = child.result() if child is not None else None
        if blobs is None:  # no child, or it failed: parse its share here
            for k in share:
                models[k] = _parse_cached(jobs[k])
            continue
        from migrate import codec

        for k, blob in blobs:
            kind, path, data, _, _, extra = jobs[k]
            models[k] = codec.loads(blob)
            cache.store_blob(kind, path, data, blob, *extra)
    return models


def shares(todo: list[int], costs: list[float], n: int, first_load: float = 0.0) -> list[list[int]]:
    """``todo`` split into ``n`` lists of about equal cost, largest first (the first is this
    process's: it does not pay a child's encoding (CHILD_OVERHEAD), so it takes the extra when costs
    tie; ``first_load``: the cost it already has)."""
    out: list[list[int]] = [[] for _ in range(n)]
    load = [first_load] + [0.0] * (n - 1)
    factor = [1.0] + [CHILD_OVERHEAD] * (n - 1)
    for k, c in sorted(zip(todo, costs), key=lambda kc: -kc[1]):
        i = min(range(n), key=lambda i: (load[i] + c * factor[i], i))
        out[i].append(k)
        load[i] += c * factor[i]
    return [sorted(s) for s in out]


def _parse_cached(job):
    kind, path, data, _, _, extra = job
    return cache.cached(kind, path, data, lambda: _parse(job), *extra)


def _fork(share: list[int], jobs: list) -> Child | None:
    """A child parsing ``share``; its result is a list of (job, codec blob)."""

    def work():
        from migrate import codec

        return [(k, codec.dumps(_parse(jobs[k]))) for k in share]

    return Child.start(work)


class Child:
    """A forked process computing one value (marshal data) and sending it back through a pipe."""

    def __init__(self, pid: int, rfd: int):
        self.pid, self.rfd = pid, rfd

    @classmethod
    def start(cls, work) -> Child | None:
        try:
            rfd, wfd = os.pipe()
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(rfd)
            os.close(wfd)
            return None
        if pid:
            os.close(wfd)
            return cls(pid, rfd)
        code = 1
        try:  # the child: compute everything first, then send (a full pipe must not stall the work)
            import marshal

            out = memoryview(marshal.dumps(work()))
            while out:
                out = out[os.write(wfd, out) :]
            code = 0
        finally:
            os._exit(code)

    def result(self):
        """The child's value, or None when it failed."""
        parts = []
        with os.fdopen(self.rfd, "rb") as fh:
            while chunk := fh.read(1 << 20):
                parts.append(chunk)
        _, status = os.waitpid(self.pid, 0)
        if status != 0:
            return None
        import marshal

        try:
            return marshal.loads(b"".join(parts))
        except (EOFError, ValueError, TypeError):  # a truncated stream: the caller does the work itself
            return None

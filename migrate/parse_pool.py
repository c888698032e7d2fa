"""Parse many files at once: cached models from the parse cache, the rest on the machine's cores.

A job is ``(kind, path, data, reader, kwargs, extra)``: ``reader`` is ``"module:function"``,
called as ``function(data, path, **kwargs)``; ``kind``, ``path``, ``data`` and ``extra`` key the
parse cache as ``cache.cached`` does.  Uncached jobs go to worker processes (forked, Linux only:
a fork needs no re-import) when there are enough bytes to parse for the start-up to pay and
idle cores to run them (a loaded machine parses faster in one process); a worker returns the
model in migrate.codec form (tree-sitter objects never cross a process).
``MPS_MIGRATE_JOBS=N`` sets the number of processes (1: this one only).
"""

from __future__ import annotations

import importlib
import os
import sys

from migrate import cache

MIN_PARALLEL_BYTES = 256 * 1024  # uncached bytes, besides the largest file, worth a pool


def _parse(job):
    kind, path, data, reader, kwargs, extra = job
    module, _, name = reader.partition(":")
    return getattr(importlib.import_module(module), name)(data, path, **kwargs)


def _parse_blob(job) -> bytes:
    from migrate import codec

    return codec.dumps(_parse(job))


def _workers(jobs: list) -> int:
    if sys.platform != "linux" or len(jobs) < 2:
        return 1
    sizes = sorted(len(j[2]) for j in jobs)
    if sum(sizes[:-1]) < MIN_PARALLEL_BYTES:
        return 1
    wanted = os.environ.get("MPS_MIGRATE_JOBS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return min(int(wanted), len(jobs))
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    idle = cores - int(os.getloadavg()[0])  # cores other processes are not already using
    return max(1, min(idle, len(jobs), 8))


def parse_all(jobs: list) -> list:
    """The model of every job, in order."""
    models = [cache.lookup(kind, path, data, *extra) for kind, path, data, _, _, extra in jobs]
    todo = [k for k, m in enumerate(models) if m is None]
    n = _workers([jobs[k] for k in todo])
    if n > 1:
        blobs = _in_pool(n, {k: jobs[k] for k in sorted(todo, key=lambda k: -len(jobs[k][2]))})  # largest first
        if blobs is not None:
            from migrate import codec

            for k, blob in blobs.items():
                kind, path, data, _, _, extra = jobs[k]
                models[k] = codec.loads(blob)
                cache.store_blob(kind, path, data, blob, *extra)
            return models
    for k in todo:
        kind, path, data, _, _, extra = jobs[k]
        models[k] = cache.cached(kind, path, data, lambda: _parse(jobs[k]), *extra)
    return models


def _in_pool(n: int, jobs: dict[int, tuple]) -> dict[int, bytes] | None:
    """Job index -> codec blob of its model; None when no pool could start."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork"))
    except (OSError, ValueError):
        return None
    with pool:
        return dict(zip(jobs, pool.map(_parse_blob, jobs.values())))

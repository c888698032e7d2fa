"""Parse many files at once: cached models from the parse cache, the rest on the machine's cores.

A job is ``(kind, path, data, reader, kwargs, extra)``: ``reader`` is ``"module:function"``,
called as ``function(data, path, **kwargs)``; ``kind``, ``path``, ``data`` and ``extra`` key the
parse cache as ``cache.cached`` does.  When there are enough uncached bytes for the start-up to
pay and idle cores to run them (a loaded machine parses faster in one process), forked children
(Linux only: a fork needs no re-import) and this process take the jobs from one queue (a pipe of
job numbers, the costliest first: whoever is free takes the next, so the processes finish together
whatever the estimates and the other load on each core), and the children send each model back
in migrate.codec form as soon as it is parsed (tree-sitter objects never cross a process); this process
decodes those that have come between its own jobs, so little is left to decode once the queue is empty.  This process first parses the
jobs only it may parse (LOCAL_KINDS).  The jobs a failed child took are parsed here.
``MPS_MIGRATE_JOBS=N`` sets the number of processes (1: this one only).

Before it forks, this process computes the readers' process-wide memos (a reader function's ``warm``
attribute, given its jobs' bytes: e.g. the macros of the c10/metal headers the Metal sources include):
each child inherits them instead of computing them again.

``after``: work for the first child once the queue is empty, given every model it has (those it
parsed, those the cache gave; None for the others), e.g. lint's Metal data-flow rules over the Metal
models.  The first child then parses the jobs ``after`` reads (``reads``; by default the AFTER_KINDS
jobs, the Metal files) before taking from the queue, so the token streams ``after`` reads are its own
(and only that child warms their readers), and this process never forks again to run those rules: a
second fork of a grown heap costs this process a page fault on every page it then writes (about 20 ms
on the 2.6.0 tree, as much as the rules it would move).  Its value comes later (that child's
``result()``), while this process goes on.
"""

from __future__ import annotations

import importlib
import itertools
import os
import sys

from migrate import cache

MIN_PARALLEL_BYTES = 256 * 1024  # uncached bytes, besides the largest file, worth a second process
# Without MPS_MIGRATE_JOBS, a second process needs this many idle cores.  On the 2-core VM of the
# measurements (docs/performance.md) a second process saves a third of the parse when both cores are free, and costs
# more than it saves when another process keeps one busy (the load average tells those apart).
MIN_AUTO_IDLE = 2
# relative to host sources: measured on the 2.6.0 tree, the native headers' scan (DECLARE_DISPATCH lines) on
# 2.7.0a0's (50 ns a byte against 143 for its host files; a .cpp's scan costs about what a host file does)
COST_PER_BYTE = {"yaml": 0.6, "metal": 1.8, "native-decl": 0.35}
# Kinds parsed in this process only: the yaml's model (20k objects) costs more to encode and decode than
# to parse, and a Metal file's token stream (source.source_file) serves the review rules' flow analysis
# later, here or in a rule_pool child forked from here (a child's would be lost).
LOCAL_KINDS = frozenset({"yaml", "metal"})
AFTER_KINDS = frozenset({"metal"})  # with ``after``: parsed first by the child that runs it
_PARSED = ()  # a child's frame between its models and its ``after`` value


def _parse(job):
    kind, path, data, reader, kwargs, extra = job
    return _reader(reader)(data, path, **kwargs)


def _warm(jobs: list) -> None:
    """Call each reader's ``warm`` (a function attribute, when it has one) once: ``warm(datas, **kwargs)``, with
    the bytes of its jobs and the kwargs of its first."""
    readers: dict[str, tuple[dict, list[bytes]]] = {}
    for _, _, data, reader, kwargs, _ in jobs:
        readers.setdefault(reader, (kwargs, []))[1].append(data)
    for reader, (kwargs, datas) in readers.items():
        warm = getattr(_reader(reader), "warm", None)
        if warm is not None:
            warm(datas, **kwargs)


def _reader(reader: str):
    module, _, name = reader.partition(":")
    return getattr(importlib.import_module(module), name)


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
    idle = cores - busy_cores()  # a loaded machine parses faster in one process
    return min(idle, 8) if idle >= MIN_AUTO_IDLE else 1


def busy_cores() -> int:
    """Cores other processes keep busy: the fewer of the 1-minute load average (which still counts a load
    that ended seconds ago, this process's own earlier runs included) and the tasks running right now
    besides this one (``/proc/loadavg``'s fourth field; a blip there while the average is low is no load)."""
    average = int(os.getloadavg()[0])
    try:
        with open("/proc/loadavg") as f:
            now = int(f.read().split()[3].partition("/")[0]) - 1
    except (OSError, ValueError, IndexError):
        return average
    return max(0, min(average, now))


def parse_all(jobs: list, after=None, between=None, reserve: float = 0.0, reads=None) -> tuple[list, Child | None]:
    """The model of every job, in order, and the child computing ``after`` (its ``result()``; None when
    no child runs it: the caller does that work itself).

    ``between()``: this process's work that needs no model, called once after its LOCAL_KINDS jobs and
    before it takes from the queue: while a child parses, the queue then leaves the child more of the
    parse.  ``reserve``: how much longer ``after`` runs than this process's work after the parse, in
    ``_cost`` units; the child running it takes no more from the queue once what is left there costs no
    more than that, so the two processes finish together.  ``reads(job)``: whether ``after`` reads that job's
    model (default: its kind is in AFTER_KINDS); the child running ``after`` parses those first, and only it
    warms their readers (_warm), so this process needs their memos only when no child runs."""
    models = [cache.lookup(kind, path, data, *extra) for kind, path, data, _, _, extra in jobs]
    todo = [k for k, m in enumerate(models) if m is None]
    workers = _workers([jobs[k] for k in todo])
    reads = reads or (lambda job: job[0] in AFTER_KINDS)
    first = [k for k in todo if reads(jobs[k])] if after is not None and workers > 1 else []
    skip = set(first)
    local = [k for k in todo if jobs[k][0] in LOCAL_KINDS and k not in skip]
    shared = sorted((k for k in todo if jobs[k][0] not in LOCAL_KINDS and k not in skip), key=lambda k: -_cost(jobs[k]))
    queue = Queue.of(shared) if workers > 1 and (shared or first) else None
    children = []
    if queue is not None:
        _warm([jobs[k] for k in todo if k not in skip])
        left, cost = {}, 0.0  # job -> the cost of the jobs queued after it
        for k in reversed(shared):
            left[k] = cost
            cost += _cost(jobs[k])
        children.append(_fork(queue, jobs, first, models, after, (left, cost, reserve)))
        children += [_fork(queue, jobs) for _ in range(workers - 2)]
        queue.close_writer()
    from migrate import codec

    def take(got) -> None:  # children's models: decoded here between this process's own jobs
        for k, blob in got:
            kind, path, data, _, _, extra = jobs[k]
            models[k] = codec.loads(blob)
            cache.store_blob(kind, path, data, blob, *extra)

    live = [child for child in children if child is not None]
    for k in local:
        models[k] = _parse_cached(jobs[k])
        for child in live:
            take(child.poll())
    if between is not None:
        between()
    for k in queue if queue is not None else shared:
        models[k] = _parse_cached(jobs[k])
        for child in live:
            take(child.poll())
    if queue is not None:
        queue.close()
    later = None
    for child in live:
        if child is children[0] and after is not None:
            take(child.until_marked())
            later = child if child.marked else None
        else:
            take(child.rest())
    for k in todo:  # the jobs of a child that failed
        if models[k] is None:
            models[k] = _parse_cached(jobs[k])
    return models, later


class Queue:
    """Job numbers in a pipe, read by this process and forked children: each read takes one job."""

    SIZE = 4  # bytes per job number; a pipe read of them is atomic, as its writes were

    def __init__(self, rfd: int, wfd: int | None) -> None:
        self.rfd, self.wfd = rfd, wfd

    @classmethod
    def of(cls, numbers: list[int]) -> Queue | None:
        """A queue holding ``numbers`` (None when the pipe cannot take them all at once)."""
        data = b"".join(k.to_bytes(cls.SIZE, "little") for k in numbers)
        if len(data) > 60_000:  # a pipe holds 64 KiB: writing more would wait for a reader
            return None
        rfd, wfd = os.pipe()
        os.write(wfd, data)
        return cls(rfd, wfd)

    def close_writer(self) -> None:
        """After the forks: once every process has closed it, an empty pipe reads as the end."""
        if self.wfd is not None:
            os.close(self.wfd)
            self.wfd = None

    def close(self) -> None:
        self.close_writer()
        os.close(self.rfd)

    def __iter__(self):
        while True:
            got = os.read(self.rfd, self.SIZE)
            if len(got) < self.SIZE:
                return
            yield int.from_bytes(got, "little")


def _parse_cached(job):
    kind, path, data, _, _, extra = job
    return cache.cached(kind, path, data, lambda: _parse(job), *extra)


def _fork(queue: Queue, jobs: list, first=(), models=(), after=None, reserve=({}, 0.0, 0.0)) -> Child | None:
    """A child parsing ``first``, then the jobs it takes from ``queue``; it sends each as (job, codec
    blob) when done; with ``after``, then _PARSED and the value of ``after(models)``.  ``reserve``: (each
    queued job's cost of the jobs after it, the queue's cost, what the child leaves): the child takes no
    more once what is left costs no more than it leaves; a job read when that was already so is not parsed
    here: parse_all parses it after the child's mark, as a failed child's."""

    def work():
        from migrate import codec

        queue.close_writer()
        _warm([jobs[k] for k in first])  # readers only this child runs: warmed here, not before the fork
        mine = list(models)
        left, total, leave = reserve
        taken = queue if total > leave else ()
        for k in itertools.chain(first, taken):  # the queue read lazily: one job at a time
            if k in left and left[k] + _cost(jobs[k]) <= leave:
                break  # this process took the jobs between: k is left to it (parsed after the mark)
            mine[k] = _parse(jobs[k])
            yield k, codec.dumps(mine[k])
            if k in left and left[k] <= leave:
                break  # the rest of the queue is this process's: ``after`` runs meanwhile
        if after is not None:
            yield _PARSED
            yield after(mine)

    return Child.stream(work, marks=after is not None)


class Child:
    """A forked process computing values (marshal data) and sending them back through a pipe.

    Each value comes framed (its length first) and an empty frame ends them: the end frame is the
    child's success, so this process takes the values as soon as their last byte arrives and never
    waits for the child's exit, which tears down a copy of this process's address space (milliseconds).
    Exited children are reaped later (``reap``), before each fork and after each child's end.
    """

    HEADER = 8  # bytes of a frame's length
    PIPE_SIZE = 1 << 20  # a streaming child's values fit unread (F_SETPIPE_SZ; the default 64 KiB may not)

    def __init__(self, pid: int, rfd: int):
        self.pid, self.rfd = pid, rfd
        self.buf = bytearray()
        self.ended = False  # the end frame came
        self.open = True
        self.marks = False  # the child sends _PARSED between two runs of values
        self.marked = False  # it came: later values are kept for rest()
        self.kept: list = []

    @classmethod
    def start(cls, work) -> Child | None:
        """A child computing the one value ``work()`` (``result``)."""
        return cls._spawn(lambda: (work(),), False)

    @classmethod
    def stream(cls, work, marks: bool = False) -> Child | None:
        """A child sending each value of the iterable ``work()`` as it comes (``poll``, ``rest``); ``marks``:
        one of them is _PARSED, which ``until_marked`` waits for."""
        child = cls._spawn(work, True)
        if child is not None:
            child.marks = marks
        return child

    @classmethod
    def _spawn(cls, values, stream: bool) -> Child | None:
        reap()
        try:
            rfd, wfd = os.pipe()
        except OSError:
            return None
        if stream:
            try:
                import fcntl

                fcntl.fcntl(wfd, fcntl.F_SETPIPE_SZ, cls.PIPE_SIZE)
            except (ImportError, AttributeError, OSError):
                pass  # a smaller pipe: the child may wait for this process to read
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
        try:  # the child: a single value is computed whole before it is sent (a full pipe must not stall it)
            import marshal

            for value in values():
                _send(wfd, marshal.dumps(value))
            _send(wfd, b"")
            os.close(wfd)
            code = 0
        finally:
            os._exit(code)

    def poll(self) -> list:
        """The values that have come whole so far, without waiting."""
        if not self.open:
            return []
        os.set_blocking(self.rfd, False)
        try:
            while chunk := os.read(self.rfd, 1 << 20):
                self.buf += chunk
            self._close()  # the end of the pipe: the child is gone
        except BlockingIOError:
            pass
        except OSError:
            self._close()
        return self._values()

    def until_marked(self) -> list:
        """The values before _PARSED (``stream(..., marks=True)``), waiting for them; those after it stay
        for ``rest``.  All the values when the child ends without sending it."""
        out = self.poll()
        while not self.marked and self._read_more():
            out += self._values()
        return out if self.marked else out + self.rest()

    def rest(self) -> list:
        """The values still to come (waiting for them); ``ended`` says whether the child sent them all."""
        while not self._complete() and self._read_more():
            pass
        self._close()
        values = self._values()
        values, self.kept = values + self.kept, []
        if self.ended:
            _EXITING.append(self.pid)
            reap()
        else:  # no end frame: the child failed
            _wait(self.pid, 0)
        return values

    def result(self):
        """The child's value (after _PARSED for a marked stream), or None when it failed."""
        values = self.rest()
        return values[0] if self.ended and len(values) == 1 else None

    def drop(self) -> None:
        """Not wanted after all: the child ends at its next write and is reaped later."""
        self._close()
        _EXITING.append(self.pid)

    def _read_more(self) -> bool:
        """Wait for more bytes into the buffer; False at the end of the pipe (then closed)."""
        if not self.open:
            return False
        os.set_blocking(self.rfd, True)
        try:
            chunk = os.read(self.rfd, 1 << 20)
        except OSError:
            chunk = b""
        if not chunk:
            self._close()
            return False
        self.buf += chunk
        return True

    def _close(self) -> None:
        if self.open:
            os.close(self.rfd)
            self.open = False

    def _complete(self) -> bool:
        """Whether the buffer holds the end frame (after whole frames only)."""
        buf, at, n = self.buf, 0, self.HEADER
        while len(buf) - at >= n:
            size = int.from_bytes(buf[at : at + n], "little")
            if size == 0:
                return True
            at += n + size
        return False

    def _values(self) -> list:
        """Decode and drop the whole frames at the start of the buffer."""
        import marshal

        buf, at, n, out = self.buf, 0, self.HEADER, []
        while len(buf) - at >= n:
            size = int.from_bytes(buf[at : at + n], "little")
            if size == 0:
                self.ended = True
                at += n
                break
            if len(buf) - at - n < size:
                break
            try:
                value = marshal.loads(bytes(buf[at + n : at + n + size]))
            except (EOFError, ValueError, TypeError):  # a corrupt frame: what follows is lost too
                self.ended = False
                del buf[:]
                self._close()
                return out
            at += n + size
            if self.marked:
                self.kept.append(value)
            elif self.marks and value == _PARSED:
                self.marked = True  # what follows is for rest()
            else:
                out.append(value)
        del buf[:at]
        return out


def _send(fd: int, data: bytes) -> None:
    """One frame: the length of ``data``, then ``data``."""
    out = memoryview(len(data).to_bytes(Child.HEADER, "little") + data)
    while out:
        out = out[os.write(fd, out) :]


_EXITING: list[int] = []  # children whose value came: reaped once they have exited


def reap() -> None:
    """Reap the children in _EXITING that have exited (without waiting for the others)."""
    _EXITING[:] = [pid for pid in _EXITING if not _wait(pid, os.WNOHANG)]


def _wait(pid: int, flags: int) -> bool:
    """``waitpid``: whether the child is gone (reaped now, or already)."""
    try:
        return os.waitpid(pid, flags)[0] == pid
    except ChildProcessError:
        return True

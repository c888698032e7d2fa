"""Parsing on several processes gives the models one process gives, and fills the same cache entries."""

from __future__ import annotations

import os

import pytest

from migrate import cache, parse_pool
from migrate.lint import lint_tree
from migrate.tree import load_tree
from tests.corpus import pytorch_260_root
from tests.helpers import MINI


def read(root, monkeypatch, jobs: int):
    monkeypatch.setenv("MPS_MIGRATE_JOBS", str(jobs))
    monkeypatch.setattr(parse_pool, "MIN_PARALLEL_BYTES", 0)  # a pool even for a small tree
    return load_tree(root)


def same(a, b) -> None:
    assert a.yaml == b.yaml and a.hosts == b.hosts and a.metals == b.metals and a.errors == b.errors
    assert list(a.hosts) == list(b.hosts) and list(a.metals) == list(b.metals)  # walk order kept
    # what load_tree reads besides the yaml and the MPS folder (parse_all's ``between``)
    assert a.common_mps == b.common_mps and a.opinfo_files == b.opinfo_files
    assert a.declared_stubs == b.declared_stubs and a.cpu_stub_calls == b.cpu_stub_calls
    assert a.native_at_calls == b.native_at_calls and list(a.sources.items()) == list(b.sources.items())


@pytest.mark.parametrize("root", [MINI, "2.6.0"], ids=["mini", "2.6.0"])
def test_pool_reads_what_one_process_reads(root, monkeypatch, tmp_path):
    root = MINI if root == MINI else pytorch_260_root()
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    forks, here = [], []  # children started; jobs this process parsed
    real_fork, real_parse = parse_pool._fork, parse_pool._parse_cached
    monkeypatch.setattr(
        parse_pool, "_fork", lambda queue, jobs, *more: forks.append(1) or real_fork(queue, jobs, *more)
    )
    monkeypatch.setattr(parse_pool, "_parse_cached", lambda job: here.append(job[0]) or real_parse(job))
    with cache.disable_cache():
        one = read(root, monkeypatch, 1)
        here.clear()
        pooled = read(root, monkeypatch, 2)
    assert one.hosts and one.metals
    # one child shares the queue; how the jobs split between it and this process depends on timing (on a
    # loaded machine either side may take them all), so only the result is compared
    assert len(forks) == 1 and here.count("host") <= len(one.hosts)
    same(one, pooled)
    assert lint_tree(one).findings == lint_tree(pooled).findings
    filled = read(root, monkeypatch, 2)  # the pool writes the cache entries ...
    same(one, filled)
    assert len(forks) == 2
    monkeypatch.setattr(parse_pool, "_parse", None)  # ... that a later read serves: nothing is parsed again
    same(one, read(root, monkeypatch, 1))


def test_a_failed_child_leaves_its_share_to_this_process(monkeypatch, tmp_path):
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    real = parse_pool._parse

    def parse(job):
        if os.getpid() != parent:
            os._exit(3)  # the child dies mid-share
        return real(job)

    parent = os.getpid()
    monkeypatch.setattr(parse_pool, "_parse", parse)
    with cache.disable_cache():
        pooled = read(MINI, monkeypatch, 2)
        one = read(MINI, monkeypatch, 1)
    same(one, pooled)


def test_the_queue_gives_each_job_once_to_whoever_asks():
    queue = parse_pool.Queue.of([5, 3, 70000, 0])
    queue.close_writer()
    child = parse_pool.Child.start(lambda: [next(iter(queue))])  # a forked reader takes the first
    assert child is not None and child.result() == [5]
    assert list(queue) == [3, 70000, 0]  # this process the rest, in order, then the end
    queue.close()
    assert parse_pool.Queue.of(list(range(20000))) is None  # more than a pipe holds at once


def test_yaml_and_metal_are_parsed_here(monkeypatch, tmp_path):
    """The yaml's model costs more to send than to parse; a Metal file's tokens serve the rules here."""
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path / "cache"))
    queued = []
    real = parse_pool.Queue.of
    monkeypatch.setattr(parse_pool.Queue, "of", lambda numbers: queued.append(list(numbers)) or real(numbers))
    jobs = []
    real_all = parse_pool.parse_all
    monkeypatch.setattr(parse_pool, "parse_all", lambda js, *rest: jobs.extend(js) or real_all(js, *rest))
    with cache.disable_cache():
        read(MINI, monkeypatch, 2)
    # what children may take: host files, and the native sources' stub scans
    assert len(queued) == 1 and {jobs[k][0] for k in queued[0]} == {"host", "native-decl", "native-scan"}
    assert {j[0] for j in jobs} >= {"yaml", "host", "metal"}


@pytest.mark.parametrize("jobs", [1, 2])
def test_between_runs_here_after_the_local_jobs_and_before_the_queue(monkeypatch, jobs):
    """This process's own work (load_tree's side files) goes between its local jobs and the shared queue: while
    a child parses, the queue then leaves the child more of the parse."""
    monkeypatch.setenv("MPS_MIGRATE_JOBS", str(jobs))
    monkeypatch.setattr(parse_pool, "MIN_PARALLEL_BYTES", 0)
    parent, events = os.getpid(), []
    real = parse_pool._parse_cached
    monkeypatch.setattr(parse_pool, "_parse_cached", lambda job: events.append(job[0]) or real(job))
    data = (MINI / "aten/src/ATen/native/mps/operations/UnaryOps.mm").read_bytes()
    work = [("host", f"h{k}.mm", data, "migrate.read.host_reader:read_host_file", {}, ()) for k in range(6)]
    yaml = (MINI / "aten/src/ATen/native/native_functions.yaml").read_bytes()
    work.insert(0, ("yaml", "y.yaml", yaml, "migrate.read.yaml_reader:read_native_yaml", {}, ()))

    def between():
        assert os.getpid() == parent
        events.append("between")

    with cache.disable_cache():
        models, _ = parse_pool.parse_all(work, None, between)
    assert all(m is not None for m in models)
    at = [k for k, e in enumerate(events) if e == "between"]
    assert len(at) == 1 and events[: at[0]] == ["yaml"]  # once, after the local job, before any host job here
    assert events.count("host") <= 6 and (jobs == 2 or events.count("host") == 6)


WARMED: list = []  # (pid, kwargs) of each warm() call below


def warm(datas, **kwargs) -> None:  # read_after_warm's: parse_all calls it before it forks
    WARMED.append((os.getpid(), len(datas), kwargs))


def read_after_warm(data: bytes, path: str, **kwargs):
    if os.getpid() == PARENT[0]:
        import time

        time.sleep(0.05)  # the child takes most jobs
    return tuple(WARMED), os.getpid()


read_after_warm.warm = warm
PARENT = [0]


def test_the_readers_memos_are_computed_once_before_the_fork(monkeypatch):
    """A reader module's ``warm``: called once, here, before the children start, so they inherit its memos."""
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    monkeypatch.setattr(parse_pool, "MIN_PARALLEL_BYTES", 0)
    PARENT[0], WARMED[:] = os.getpid(), []
    work = [
        ("host", f"h{k}.mm", b"x" * 100, f"{__name__}:read_after_warm", {"include_dirs": ["d"]}, ()) for k in range(6)
    ]
    with cache.disable_cache():
        models, _ = parse_pool.parse_all(work)
    assert all(warmed == ((PARENT[0], 6, {"include_dirs": ["d"]}),) for warmed, _ in models)
    assert any(pid != PARENT[0] for _, pid in models)  # a child parsed some, with the memos it inherited


def read_first(data: bytes, path: str, **kwargs):  # the after-child's readers: warmed in that child
    return tuple(WARMED), os.getpid()


read_first.warm = warm


def test_the_after_child_parses_what_after_reads_first_and_warms_only_its_readers(monkeypatch):
    """``reads``: the jobs ``after`` reads, whatever their kind, go to the child running it before anything from
    the queue; their readers are warmed in that child, the other jobs' readers here before the fork."""
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    monkeypatch.setattr(parse_pool, "MIN_PARALLEL_BYTES", 0)
    PARENT[0], WARMED[:] = os.getpid(), []
    work = [("host", f"h{k}.mm", b"x" * 100, f"{__name__}:read_after_warm", {}, ()) for k in range(6)]
    work[4] = ("host", "inline.mm", b'R"x', f"{__name__}:read_first", {}, ())
    with cache.disable_cache():
        models, later = parse_pool.parse_all(
            work, after=lambda mine: mine[4] is not None, reads=lambda job: job[1] == "inline.mm"
        )
    assert later is not None and later.result() is True  # the child had that model when ``after`` ran
    warmed, pid = models[4]
    assert pid != PARENT[0]  # parsed by the child
    assert warmed == ((PARENT[0], 5, {}), (pid, 1, {}))  # the others' warm here (5 jobs), its own there
    assert all(m[0][0] == (PARENT[0], 5, {}) for m in models)


def test_host_files_without_metal_strings_warm_no_metal_memo():
    """A host job that cannot hold Metal (no raw string) leaves the Metal reader's memos to whoever reads Metal:
    before the fork this process warms only what both processes read."""
    from migrate import tree
    from migrate.read import host_reader, metal_reader

    metal_reader.registration_table.cache_clear()
    metal_reader.header_macros.cache_clear()
    ops = "aten/src/ATen/native/mps/operations"
    datas = [f.read_bytes() for f in sorted((MINI / ops).glob("*.mm"))]
    assert datas and not any(host_reader.may_hold_metal(d) for d in datas)
    tree.read_host_job.warm(datas, tree.metal_include_dirs(MINI))
    assert metal_reader.header_macros.cache_info().misses == 0
    assert metal_reader.registration_table.cache_info().misses == 0
    job = ("host", "x.mm", b'auto s = R"M(kernel void k() {})M";', "migrate.tree:read_host_job", {}, ())
    assert tree._metal_job(job) and not tree._metal_job(job[:2] + (datas[0],) + job[3:])
    assert tree._metal_job(("metal", "k.metal", b"", "", {}, ())) and not tree._metal_job(
        ("yaml", "y", b"", "", {}, ())
    )


@pytest.mark.parametrize(
    ("cores", "load", "running", "want"),
    [
        (2, 0.0, 1, 2),
        (2, 1.2, 2, 1),  # busy on average and now
        (2, 1.2, 1, 2),  # a load that ended: only this process runs now
        (2, 0.3, 3, 2),  # a blip now, no load on average
        (4, 1.5, 5, 3),
        (4, 3.0, 9, 1),
        (16, 0.0, 1, 8),
        (2, 1.2, None, 1),  # no /proc/loadavg: the average decides
    ],
)
def test_auto_uses_the_idle_cores(monkeypatch, tmp_path, cores, load, running, want):
    monkeypatch.delenv("MPS_MIGRATE_JOBS", raising=False)
    monkeypatch.setattr(parse_pool.sys, "platform", "linux")
    monkeypatch.setattr(parse_pool.os, "sched_getaffinity", lambda pid: set(range(cores)))
    monkeypatch.setattr(parse_pool.os, "getloadavg", lambda: (load, load, load))
    real_open = open
    fake = tmp_path / "loadavg"
    if running is not None:
        fake.write_text(f"{load:.2f} {load:.2f} {load:.2f} {running}/300 4242\n")

    def fake_open(path, *args, **kwargs):
        return real_open(fake if path == "/proc/loadavg" else path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", fake_open)
    assert parse_pool.idle_workers() == want
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    assert parse_pool.idle_workers() == 2


def _headers_computed(monkeypatch) -> list[str]:
    """The c10/metal headers whose macros metal_reader works out from now on (header_macros' misses)."""
    from migrate.read import metal_reader

    real, computed = metal_reader.header_macros, []

    def spy(dirs, rel):
        misses = real.cache_info().misses
        out = real(dirs, rel)
        if real.cache_info().misses > misses and rel.startswith("c10/metal/"):  # <metal_stdlib>: nothing to read
            computed.append(rel)
        return out

    monkeypatch.setattr(metal_reader, "header_macros", spy)
    return computed


def test_after_warm_a_host_job_computes_no_memo_again(monkeypatch):
    """read_host_job's warm (load_tree's host jobs) fills every memo a host file and its Metal strings read, so a
    forked reader computes none of them again."""
    from migrate import tree
    from migrate.read import host_reader, metal_reader

    memos = [
        metal_reader.registration_table,
        metal_reader.header_macros,
        host_reader._all_markers,
        host_reader._kernel_call_pattern,
        host_reader._helper_words,
    ]
    for memo in memos:
        memo.cache_clear()
    includes = tree.metal_include_dirs(MINI)
    assert includes  # the installed torch's c10/metal headers at least
    ops = "aten/src/ATen/native/mps/operations"
    sources = [(f.read_bytes(), f"{ops}/{f.name}") for f in sorted((MINI / ops).glob("*.mm"))]
    sources.append(
        (
            b"static auto& lib = MetalShaderLibrary::getBundledLibrary();\n"
            b'static const char* SHADER = R"METAL(\n#include <c10/metal/special_math.h>\n'
            b"kernel void twice(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] *= 2; }\n"
            b')METAL";\n',
            f"{ops}/Inline.mm",
        )
    )
    tree.read_host_job.warm([data for data, _ in sources], includes)
    before = [memo.cache_info().misses for memo in memos]
    assert all(before) and before[1] == 2  # indexing.h, and special_math.h for the Metal string
    computed = _headers_computed(monkeypatch)
    inline = [m for data, rel in sources for m in tree.read_host_job(data, rel, includes)[1]]
    assert any("twice" in m.kernel_functions for m in inline)  # a Metal string was read too
    assert [memo.cache_info().misses for memo in memos[2:]] == before[2:]
    assert metal_reader.registration_table.cache_info().misses == before[0] and computed == []


def test_after_warm_a_metal_job_computes_no_memo_again(monkeypatch):
    from migrate import tree
    from migrate.read import metal_reader

    metal_reader.registration_table.cache_clear()
    metal_reader.header_macros.cache_clear()
    includes = tree.metal_include_dirs(MINI)
    kernels = sorted((MINI / "aten/src/ATen/native/mps/kernels").glob("*.metal"))
    assert kernels
    metal_reader.read_metal_source.warm([f.read_bytes() for f in kernels], include_dirs=includes)
    assert metal_reader.header_macros.cache_info().misses == 3  # indexing.h, the two others the kernels include
    tables = metal_reader.registration_table.cache_info().misses
    computed = _headers_computed(monkeypatch)
    for f in kernels:
        metal_reader.read_metal_source(f.read_bytes(), f.relative_to(MINI).as_posix(), include_dirs=includes)
    assert computed == [] and metal_reader.registration_table.cache_info().misses == tables


def read_where(data: bytes, path: str):
    """A reader whose model says which process parsed the job."""
    return os.getpid()


@pytest.mark.parametrize("leave", [0, 250, 10_000])
def test_the_after_child_leaves_the_end_of_the_queue_to_this_process(monkeypatch, leave):
    """``reserve``: the child whose ``after`` runs longer than this process's work after the parse takes no job
    from the queue once what is left there costs no more than that: this process parses the rest."""
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    monkeypatch.setattr(parse_pool, "MIN_PARALLEL_BYTES", 0)
    sizes = [400, 300, 200, 100, 100, 50, 50]  # queued costliest first: 1200 in all
    work = [("host", f"h{k}.mm", b"x" * n, f"{__name__}:read_where", {}, ()) for k, n in enumerate(sizes)]
    work.insert(0, ("metal", "k.metal", b"kernel", f"{__name__}:read_where", {}, ()))  # the child's first job
    slow = parse_pool._parse

    def parse(job):  # this process is slow: left alone, the child would take most of the queue
        if os.getpid() == parent:
            import time

            time.sleep(0.03)
        return slow(job)

    parent = os.getpid()
    monkeypatch.setattr(parse_pool, "_parse", parse)
    with cache.disable_cache():
        models, later = parse_all_after(work, leave)
    assert all(models) and later is not None
    seen = later.result()  # which models the child had when ``after`` ran
    assert seen[0] and models[0] != parent  # its first job, always its own
    after_it = {k: sum(sizes[j] for j in range(k + 1, len(sizes))) for k in range(len(sizes))}
    for k in range(len(sizes)):
        if models[k + 1] != parent:  # a queued job the child took: more than ``leave`` was left before it
            assert after_it[k] + sizes[k] > leave and seen[k + 1]
    if leave >= sum(sizes):
        assert all(m == parent for m in models[1:])  # the whole queue is this process's
    if leave == 0:
        assert any(m != parent for m in models[1:])  # the child took from the queue


def test_a_job_the_child_reads_after_this_process_took_the_rest_is_left_to_this_process(monkeypatch, tmp_path):
    """``reserve``: the child's check before each job it reads: when this process took enough of the queue
    while the child parsed, the job it reads next (what is left from it costs no more than ``leave``) is
    parsed here, not by the child, though the child's job before it had more than ``leave`` after it."""
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    monkeypatch.setattr(parse_pool, "MIN_PARALLEL_BYTES", 0)
    sizes = [400, 300, 200, 100, 100, 50, 50]  # after the 4th job, what is left costs at most 200 < 250
    work = [("host", f"h{k}.mm", b"x" * n, f"{__name__}:read_where", {}, ()) for k, n in enumerate(sizes)]
    work.insert(0, ("metal", "k.metal", b"kernel", f"{__name__}:read_where", {}, ()))
    log, started, slow, parent = tmp_path / "parsed", tmp_path / "started", parse_pool._parse, os.getpid()

    def wait(done) -> None:
        import time

        end = time.monotonic() + 10
        while not done() and time.monotonic() < end:
            time.sleep(0.005)

    def parse(job):  # the child's first queued job waits until this process has read four
        import time

        if os.getpid() == parent:
            wait(started.exists)  # the child has read its first queued job (h0 or h1): a loaded machine may
            with log.open("a") as f:  # otherwise let this process read three before it
                f.write(job[1] + "\n")
            if len(log.read_text().split()) == 4:
                time.sleep(0.5)  # the child reads its next job meanwhile
        elif job[0] == "host":
            started.touch()
            wait(lambda: log.exists() and len(log.read_text().split()) >= 4)
        return slow(job)

    monkeypatch.setattr(parse_pool, "_parse", parse)
    with cache.disable_cache():
        models, later = parse_all_after(work, 250)
    assert later is not None and all(later.result()[:1])
    mine = [k for k in range(len(sizes)) if models[k + 1] != parent]
    assert len(mine) <= 1 and all(sizes[k] >= 300 for k in mine)  # h0 or h1; what it read next stayed here


def parse_all_after(work, leave):
    return parse_pool.parse_all(work, after=lambda mine: tuple(m is not None for m in mine), reserve=leave)


def test_the_flow_rules_lead_follows_the_sizes():
    from migrate.rule_pool import FLOW_COST_PER_METAL_BYTE, RULES_COST_PER_BYTE, flow_lead

    assert flow_lead(100_000, 1_000_000, False) == pytest.approx(
        FLOW_COST_PER_METAL_BYTE * 100_000 - RULES_COST_PER_BYTE * 1_000_000
    )
    assert flow_lead(10_000, 1_000_000, False) == 0.0  # the other rules run longer: nothing left over
    assert flow_lead(100_000, 1_000_000, True) == 0.0  # common_mps.py's rules run longest


def test_load_tree_leaves_the_flow_rules_lead_to_this_process(monkeypatch):
    """On 2.6.0 the flow rules run longer than the others (measured): the parse child leaves this process that
    much of the parse."""
    from migrate import rule_pool
    from migrate.lint import lint_root

    root = pytorch_260_root()
    got = []
    real = parse_pool.parse_all
    monkeypatch.setattr(parse_pool, "parse_all", lambda *a: got.append(a[3]) or real(*a))
    monkeypatch.setenv("MPS_MIGRATE_JOBS", "2")
    with cache.disable_cache():
        lint_root(root)
    tree = load_tree(root)
    metal = sum(len(d) for r, d in tree.sources.items() if r in tree.metals and r.endswith(".metal"))
    other = sum(len(d) for r, d in tree.sources.items() if r in tree.hosts or r == tree.yaml.path)
    assert got == [rule_pool.flow_lead(metal, other, False), 0.0] and got[0] > 0  # no Metal work: no reserve

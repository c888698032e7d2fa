"""verify survives kernels that crash, hang or exhaust memory: each planted fault is a FAIL naming the
kernel, the case (dtype, layout, size) and the signal, verify exits 1, and the other cells still
run and pass (the worker is restarted after each fault). One dtype of atan2 per planted fault."""

from __future__ import annotations

import platform
import re
import shutil

import pytest
import torch

from migrate.cli import main
from migrate.verify.report import to_text
from migrate.verify.run import Options, verify
from tests.helpers import KERNELS, MINI

X86 = platform.machine().lower() in ("x86_64", "amd64")

# the floating overload: float32 is left alone
FLOAT_PLANTS = """
    if (is_same_v<T, half>) {  // far out of bounds
      thread T* p = (thread T*)&a;
      p[100000000u * 1024u] = b;
    }
    if (is_same_v<T, bfloat>) {  // null dereference
      device T* p = nullptr;
      *p = b;
    }
"""
# the integral overload (returns float): bool, int8 and uint8 are left alone
INT_PLANTS = """
    if (is_same_v<T, long>) {  // endless loop
      for (uint k = 0; k < 10u; k *= 2u) {}
    }
    if (is_same_v<T, int> && a > 0) {  // a barrier reached by part of the threadgroup only
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (is_same_v<T, short>) {  // integer division by zero
      return float(int(a) / int(b - b));
    }
    if (is_same_v<T, uchar> && a == 255) {  // unbounded allocation
      device long* prev = nullptr;
      while (a != 0) {
        device long* q = (device long*)malloc(1ul << 24);  // address space, not touched: fast anywhere
        q[0] = long(prev);
        prev = q;
      }
    }
"""
CALL = "    return static_cast<T>(precise::atan2(float(a), float(b)));\n"
INT_CALL = "    return precise::atan2(float(a), float(b));\n"


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("planted") / "tree"
    shutil.copytree(MINI, root)
    f = root / KERNELS / "BinaryKernel.metal"
    text = f.read_text()
    assert text.count(CALL) == 1 and text.count(INT_CALL) == 1
    text = text.replace(CALL, FLOAT_PLANTS + CALL).replace(INT_CALL, INT_PLANTS + INT_CALL)
    f.write_text(text.replace("using namespace metal;", 'using namespace metal;\nextern "C" void* malloc(ulong);', 1))
    return root


DTYPES = [
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.uint8,
    torch.int8,
    torch.bool,
]


@pytest.fixture(scope="module")
def report(planted):
    opts = Options(dtypes=DTYPES, layouts=["contiguous", "odd_size"], opinfo=False, timeout=2, memory=1 << 30)
    return verify(planted, "atan2", opts=opts)


def failures(report, dtype: str) -> list[str]:
    return [f for c in report.cells if c.dtype == dtype for f in c.failures]


def test_faults_are_fails_and_the_other_cells_pass(report):
    text = to_text(report)
    assert report.exit_code == 1
    status = {(c.dtype, c.layout): c.status for c in report.cells}
    for d in ("float32", "int8", "bool"):
        assert status[(d, "contiguous")] == status[(d, "odd_size")] == "pass", text
    bad = {"float16", "bfloat16", "int64", "int32"} | ({"int16"} if X86 else set())
    assert {d for (d, _), s in status.items() if s == "FAIL"} >= bad, text
    assert "FAIL float16 contiguous: atan2_dense_half_half: the kernel crashed its worker: SIGSEGV" in text


def test_out_of_bounds_write_names_kernel_case_and_signal(report):
    first = failures(report, "float16")[0]
    assert first.startswith("atan2_dense_half_half: the kernel crashed its worker: SIGSEGV (segmentation fault)")
    assert first.endswith("[case float16 contiguous size [1000]]") or "[case float16 contiguous size [" in first


def test_null_dereference(report):
    # at -O0 zig's clang traps the store through a null pointer (UBSan): SIGABRT; else the store faults
    fails = failures(report, "bfloat16")
    assert fails and all("SIGABRT (abort)" in f or "SIGSEGV" in f for f in fails)
    assert all(f.startswith("atan2_dense_") and "[case bfloat16 " in f for f in fails)


def test_endless_loop_times_out(report):
    fails = failures(report, "int64")
    assert fails and all("timeout: no result after 2 s" in f and "[case int64 " in f for f in fails)


def test_barrier_reached_by_part_of_the_group_is_a_deadlock(report):
    fails = failures(report, "int32")
    assert fails and all("deadlock: threadgroup_barrier reached by" in f for f in fails)


@pytest.mark.skipif(not X86, reason="integer division by zero traps on x86-64 only (aarch64 returns 0)")
def test_integer_division_by_zero(report):
    # at -O0 zig's clang checks the division (UBSan) and aborts; optimised code traps in idiv
    fails = failures(report, "int16")
    assert fails and all("SIGFPE (arithmetic trap)" in f or "panic: division by zero" in f for f in fails)


def test_unbounded_allocation_is_out_of_memory(report):
    # uint8 inputs hold 255 in some cases only (the special values); those cases fail
    fails = failures(report, "uint8")
    assert fails and all("out of memory" in f and "1024 MiB address-space limit" in f for f in fails)


def test_report_says_how_kernels_were_confined(report):
    note = next(n for n in report.notes if n.startswith("kernels ran in an isolated worker process: "))
    assert "limits: address space 1024 MiB" in note and "network: " in note and "files: " in note


def test_cli_exit_code_and_fail_line(planted, capsys):
    rc = main(
        [
            "verify",
            "atan2",
            "--root",
            str(planted),
            "--dtypes",
            "float32,float16",
            "--layouts",
            "contiguous",
            "--no-opinfo",
            "--timeout",
            "5",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 1
    assert re.search(r"^float32 +contiguous +pass ", out, re.M)
    assert "FAIL float16 contiguous: atan2_dense_half_half: the kernel crashed its worker: SIGSEGV" in out
    assert "[case float16 contiguous size [" in out


def test_checked_mode_names_thread_and_address(planted):
    r = verify(
        planted,
        "atan2",
        opts=Options(dtypes=[torch.float16], layouts=["contiguous"], opinfo=False, checked=True, timeout=5),
    )
    fails = failures(r, "float16")
    assert r.exit_code == 1 and fails
    assert all(
        "SIGSEGV at address 0x" in f
        and "by thread_position_in_grid=[0, 0, 0]" in f
        and "[case float16 contiguous size [" in f
        for f in fails
    )


def test_the_kernel_gets_the_case_tensors_without_copies(monkeypatch):
    """The case's inputs and the output live in the worker's arena: a launch sends their offsets, copying
    only the host's small temporaries (sizes, strides, casts)."""
    from migrate.device.cpu.checked import spans
    from migrate.device.isolation import library as iso

    launches = []
    place = iso._place

    def spy(bounds, ar):
        out = place(bounds, ar)
        launches.append((len(spans(bounds)), len(out[2])))
        return out

    monkeypatch.setattr(iso, "_place", spy)
    layouts = ["contiguous", "transposed", "strided", "out_cast"]
    r = verify(MINI, "exp", opts=Options(dtypes=[torch.float32], layouts=layouts, opinfo=False, timeout=30))
    assert r.exit_code == 0 and len(launches) >= len(layouts)
    assert all(found - copied >= 2 for found, copied in launches), launches  # the output and the input

"""One host file (``.mm``/``.cpp``) compiled as Objective-C++ against the shim SDK, the tree's MPS headers, the
torchgen declarations of its yaml and the installed torch's headers.

Include order: the shim SDK (Foundation is GNUstep's), then the tree's own ``ATen/native/mps`` headers (the wheel
ships a newer ``OperationUtils.h`` that would shadow the one the tree's ``OperationUtils.mm`` implements), then the
generated declarations, the wheel's headers, the tree's ``aten/src`` (for what the wheel lacks) and GNUstep.
The tree's other headers come after the wheel's: a 2.7 ``native/*.h`` mixed with 2.13's core does not compile.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from migrate.cache import cache_base
from migrate.device.cpu.build import run_stopped_after
from migrate.device.errors import Diagnostic

from . import declarations, toolchain

FORMAT = "host-v1"
MPS_DIR = Path("aten/src/ATen/native/mps")
COMPILE_TIMEOUT = 300.0


def cache_root() -> Path:
    return cache_base() / FORMAT


@dataclass(frozen=True)
class UnitResult:
    file: Path
    ok: bool
    diagnostics: tuple[Diagnostic, ...]
    output: str  # the compiler's stderr, for a failure with no parsed diagnostic
    cached: bool = False

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    def first_error(self) -> str | None:
        errs = self.errors
        if errs:
            return str(errs[0])
        if self.ok:
            return None
        tail = [ln for ln in self.output.strip().splitlines() if ln.strip()]
        return tail[-1] if tail else "the compiler failed with no message"


class TreeUnits:
    """How host files of one tree compile: flags, include folders, cache."""

    def __init__(self, root: Path, progress=None):
        self.root = root.resolve()
        self.tc = toolchain.find()
        base = cache_root()
        self.decl = declarations.generate(self.root, base / "decl", progress)
        self.overlay = self._overlay(base)
        self.objc = toolchain.objc_headers(base, self.tc)

    def _overlay(self, base: Path) -> Path:
        """A folder whose ``ATen/native/mps`` is the tree's, ahead of the wheel's copy."""
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:16]
        dest = base / "overlay" / digest
        link = dest / "ATen" / "native" / "mps"
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            try:
                link.symlink_to(self.root / MPS_DIR, target_is_directory=True)
            except FileExistsError:
                pass
        return dest

    def include_flags(self) -> list[str]:
        t = self.tc.torch_dir
        return [
            "-isystem", str(self.objc), "-isystem", str(toolchain.shim_dir() / "include"),
            "-I", str(toolchain.shim_dir() / "compat"), "-I", str(self.overlay), "-I", str(self.decl), "-I", str(t / "include"),
            "-I", str(t / "include/torch/csrc/api/include"), "-I", str(self.root / "aten/src"),
            "-isystem", str(self.tc.gnustep_include),
        ]  # fmt: skip

    def flags(self) -> list[str]:
        prefix = toolchain.shim_dir() / "include" / "mps_migrate_prefix.h"
        return [
            *toolchain.OBJC_FLAGS, *toolchain.DEFINES, "-w", "-ferror-limit=50", *self.include_flags(),
            "-include", str(prefix),
        ]  # fmt: skip

    def check(self, path: Path, timeout: float = COMPILE_TIMEOUT) -> UnitResult:
        """Syntax and semantic check of one host file (no code generated), cached by its inputs."""
        cmd = [self.tc.cxx, *self.flags(), "-fsyntax-only", str(path)]
        return self._run(path, cmd, timeout)

    def _run(self, path: Path, cmd: list[str], timeout: float) -> UnitResult:
        key = _key(cmd, path)
        entry = cache_root() / "checks" / f"{key}.json"
        try:
            data = json.loads(entry.read_text())
            if _deps_valid(data["deps"]):
                return _result(path, data, cached=True)
        except (OSError, ValueError, KeyError):
            pass
        with tempfile.TemporaryDirectory(prefix="mps-host-") as tmp:
            depfile = Path(tmp) / "deps.d"
            proc = _spawn([*cmd, "-MD", "-MF", str(depfile)], timeout)
            deps = _read_deps(depfile, path) if depfile.exists() else []
        data = {"returncode": proc.returncode, "stderr": proc.stderr, "deps": deps}
        if deps:
            _write(entry, json.dumps(data).encode())
        return _result(path, data, cached=False)


def _spawn(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    proc = run_stopped_after(cmd, timeout)
    if proc is None:
        return subprocess.CompletedProcess(cmd, -9, "", f"the compiler did not finish within {timeout:g} s")
    return proc


_DIAG = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>fatal error|error|warning): (?P<msg>.*)$")


def diagnostics(stderr: str) -> tuple[Diagnostic, ...]:
    out = []
    for line in stderr.splitlines():
        m = _DIAG.match(line)
        if m:
            sev = "error" if m["sev"] == "fatal error" else m["sev"]
            out.append(Diagnostic(m["file"], int(m["line"]), int(m["col"]), sev, m["msg"]))
    return tuple(out)


def _result(path: Path, data: dict, cached: bool) -> UnitResult:
    return UnitResult(path, data["returncode"] == 0, diagnostics(data["stderr"]), data["stderr"], cached)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _key(cmd: list[str], path: Path) -> str:
    return _sha(json.dumps([FORMAT, cmd, _sha(path.read_bytes())]).encode())[:32]


def _read_deps(depfile: Path, source: Path) -> list[list[str]]:
    text = depfile.read_text(errors="replace").replace("\\\n", " ")
    _, _, files = text.partition(":")
    deps = []
    for name in re.split(r"(?<!\\)\s+", files.strip()):
        if not name:
            continue
        p = Path(name.replace("\\ ", " "))
        try:
            st = p.stat()
            deps.append([str(p), _sha(p.read_bytes()), st.st_mtime_ns, st.st_size])
        except OSError:
            continue
    return deps


_CHECKED: dict[tuple[str, int, int], str] = {}  # (path, mtime_ns, size) -> digest, for this process


def _deps_valid(deps: list[list]) -> bool:
    """Every header the unit read is unchanged: same stat as recorded (a file just written is hashed), else the
    same content."""
    for name, digest, *stat in deps:
        try:
            st = Path(name).stat()
        except OSError:
            return False
        if stat == [st.st_mtime_ns, st.st_size] and st.st_mtime_ns < (time.time() - 2) * 1e9:
            continue
        key = (name, st.st_mtime_ns, st.st_size)
        if key not in _CHECKED:
            try:
                _CHECKED[key] = _sha(Path(name).read_bytes())
            except OSError:
                return False
        if _CHECKED[key] != digest:
            return False
    return bool(deps)


def _write(path: Path, data: bytes) -> None:
    from migrate.apply import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data)


def compile_object(tc_units: TreeUnits, path: Path, extra: tuple[str, ...] = (), timeout: float = COMPILE_TIMEOUT):
    """(object file or None, UnitResult): one source compiled to position-independent code, cached by its
    inputs (the source, every header it read, the flags)."""
    lang = [] if path.suffix in (".mm", ".m") else ["-x", "c++" if path.suffix in (".cpp", ".cc") else "c"]
    flags = tc_units.flags()
    if lang:  # a C++ or C source: the same include folders, no Objective-C mode
        flags = [f for f in flags if f not in toolchain.OBJC_FLAGS or f == "-std=c++20"]
        flags = [f for f in flags if not (lang[1] == "c" and f == "-std=c++20")]
        if lang[1] == "c":
            flags = [f for f in flags if f != "-include" and not f.endswith("mps_migrate_prefix.h")]
    cxx = tc_units.tc.cc if lang[-1:] == ["c"] else tc_units.tc.cxx
    cmd = [cxx, *lang, *flags, "-fPIC", "-O1", "-g0", *extra, "-c", str(path)]
    key = _key(cmd, path)
    obj = cache_root() / "objects" / f"{key}.o"
    meta = obj.with_suffix(".json")
    try:
        data = json.loads(meta.read_text())
        if obj.exists() and _deps_valid(data["deps"]):
            return obj, _result(path, data, cached=True)
    except (OSError, ValueError, KeyError):
        pass
    obj.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mps-host-", dir=obj.parent) as tmp:
        out = Path(tmp) / "unit.o"
        depfile = Path(tmp) / "deps.d"
        proc = _spawn([*cmd, "-o", str(out), "-MD", "-MF", str(depfile)], timeout)
        deps = _read_deps(depfile, path) if depfile.exists() else []
        data = {"returncode": proc.returncode, "stderr": proc.stderr, "deps": deps}
        if proc.returncode == 0 and out.exists():
            os.replace(out, obj)
            _write(meta, json.dumps(data).encode())
            return obj, _result(path, data, cached=False)
    return None, _result(path, data, cached=False)

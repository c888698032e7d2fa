"""MSL source -> cached shared library: clang -E, pre-pass, launchers, clang.

Cache layout (`migrate.cache.cache_base()`, subfolder cpu-v1):
  src/<k1>/<filename>   the shader source as the compiler sees it
  <k1>.manifest.json    header dependencies + their hashes -> build key k2
  <k2>.json, <k2>.so    kernel metadata and the library
Files are written to a unique temporary name and renamed into place, so
concurrent processes never see a partial file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import Diagnostic, MetalCompileError
from . import toolchain
from .launchers import launchers
from .prepass import prepass

FORMAT = "cpu-v1"
COMPILE_TIMEOUT = 600.0  # seconds per compiler stage; a pathological shader becomes a compile error


def cache_root() -> Path:
    from migrate.cache import cache_base

    return cache_base() / FORMAT


@dataclass(frozen=True)
class Built:
    path: Path  # the library (.so) or, for CUDA, the PTX
    meta: dict
    cached: bool
    seconds: float


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-" + path.name)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _deps_valid(deps: list[list[str]]) -> bool:
    for path, digest in deps:
        try:
            if _sha(Path(path).read_bytes()) != digest:
                return False
        except OSError:
            return False
    return True


_DIAG = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<sev>fatal error|error|warning|note): (?P<msg>.*)$")


def _diagnostics(stderr: str, user_src: Path, filename: str) -> tuple[Diagnostic, ...]:
    """clang output -> diagnostics in the user's terms (internal files hidden)."""
    msl = str(toolchain.msl_dir())
    out: list[Diagnostic] = []
    for line in stderr.splitlines():
        m = _DIAG.match(line)
        if not m:
            continue
        file = m["file"]
        if file == str(user_src):
            file = filename
        elif file.startswith(msl) or file.endswith(".gen.cpp"):
            if m["sev"] == "note":
                continue
            file = "<mps-migrate runtime>"
        sev = "error" if m["sev"] == "fatal error" else m["sev"]
        msg = m["msg"].replace("__msl_ctor<", "(").replace("__msl_cast", "static_cast")
        out.append(Diagnostic(file, int(m["line"]), int(m["col"]), sev, msg))
    return tuple(out)


def _compile_error(stage: str, stderr: str, user_src: Path, filename: str, source: str) -> MetalCompileError:
    diags = _diagnostics(stderr, user_src, filename)
    errors = [d for d in diags if d.severity == "error"]
    lines = source.splitlines()
    text: list[str] = []
    shown = 0
    for d in diags:
        if d.severity == "error":
            shown += 1
            if shown > 5:
                break
        elif d.severity == "note" and (shown == 0 or shown > 5 or d.file != filename):
            continue
        elif d.severity == "warning":
            continue
        text.append(str(d))
        if d.file == filename and 0 < d.line <= len(lines):
            text.append("    " + lines[d.line - 1].strip())
    if not errors:
        tail = [ln for ln in stderr.strip().splitlines() if ln.strip()][-8:]
        text = [f"{stage} failed:"] + tail
    head = f"Metal compile error in {filename}" + (f" ({len(errors)} error(s))" if errors else "")
    return MetalCompileError(head + "\n" + "\n".join(text), tuple(errors))


def run_stopped_after(cmd: list[str], timeout: float) -> subprocess.CompletedProcess | None:
    """Run a compiler in its own process group; past ``timeout`` the whole group is killed (None)."""
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _run(cmd: list[str], timeout: float, stage: str, filename: str) -> subprocess.CompletedProcess:
    proc = run_stopped_after(cmd, timeout)
    if proc is None:
        raise MetalCompileError(
            f"Metal compile error in {filename}\n{stage} did not finish within {timeout:g} s "
            "and was stopped (a template explosion or endless #include?)"
        )
    return proc


def built_before(root: Path, key: list, suffix: str, usable=lambda manifest: True):
    """(k1: the hash of ``key``, what manifest ``<k1>`` points at: ``<k2><suffix>`` and its metadata, while its
    header dependencies are unchanged; else None, to build)."""
    k1 = _sha(json.dumps(key).encode())
    try:
        man = json.loads((root / f"{k1}.manifest.json").read_text())
        built, meta_path = root / f"{man['key']}{suffix}", root / f"{man['key']}.json"
        if built.exists() and _deps_valid(man["deps"]) and usable(man):
            return k1, (built, json.loads(meta_path.read_text()))
    except (OSError, ValueError, KeyError):
        pass
    return k1, None


def preprocessed(root: Path, k1: str, source: str, include_dirs: list[Path], filename: str, timeout: float):
    """The source written under ``src/<k1>/``, through clang -E and the pre-pass: (its path, the pre-pass)."""
    src = root / "src" / k1 / filename
    if not src.exists() or src.read_text() != source:
        _atomic_write(src, source.encode())
    pre = _run(toolchain.preprocess_cmd(src, include_dirs), timeout, "preprocessing", filename)
    if pre.returncode != 0:
        raise _compile_error("preprocessing", pre.stderr, src, filename, source)
    return src, prepass(pre.stdout, str(src))


def write_manifest(root: Path, k1: str, k2: str, src: Path, files, name=str, **extra) -> None:
    """Manifest ``<k1>``: build key ``k2`` and the hash of each header the source read (not the runtime's)."""
    deps = []
    for f in files:
        p = Path(f)
        if f == str(src) or not p.is_file() or str(p).startswith(str(toolchain.msl_dir())):
            continue
        deps.append([name(p), _sha(p.read_bytes())])
    _atomic_write(root / f"{k1}.manifest.json", json.dumps({"key": k2, "deps": deps, **extra}).encode())


def build(
    source: str,
    include_dirs: list[Path],
    filename: str = "shader.metal",
    opt: int = 1,
    timeout: float = COMPILE_TIMEOUT,
) -> Built:
    t0 = time.perf_counter()
    root = cache_root()
    filename = Path(filename).name or "shader.metal"
    key = [FORMAT, toolchain.runtime_fingerprint(), source, filename, [str(p) for p in include_dirs], opt]
    k1, hit = built_before(root, key, ".so")
    if hit is not None:
        return Built(*hit, True, time.perf_counter() - t0)
    src, result = preprocessed(root, k1, source, include_dirs, filename, timeout)
    cpp = result.text + "\n" + launchers(result.kernels)
    cpp = cpp.replace(str(src), filename)  # diagnostics and __FILE__ name the user's file
    flags = toolchain.compile_cmd(Path("x.cpp"), Path("x.so"), opt)[3:]
    k2 = _sha(json.dumps([toolchain.runtime_fingerprint(), flags, cpp]).encode())
    so, meta_path = root / f"{k2}.so", root / f"{k2}.json"
    meta = {
        "filename": filename,
        "kernels": [
            {
                "name": k.host_name,
                "index": i,
                "fibers": k.uses_sync,
                "nslots": (max(k.slots) + 1) if k.slots else 0,
                "params": [{"text": p.text, "attr": list(p.attr)} for p in k.params],
                "slots": {str(s): pi for s, pi in k.slots.items()},
                "file": k.origin.file.replace(str(src), filename),
                "line": k.origin.line,
            }
            for i, k in enumerate(result.kernels)
        ],
    }
    cached = so.exists() and meta_path.exists()
    if not cached:
        toolchain.ensure_runtime(root, opt)
        with tempfile.TemporaryDirectory(dir=root, prefix=".build-") as tmp:
            gen = Path(tmp) / f"{filename}.gen.cpp"
            gen.write_text(cpp)
            out = Path(tmp) / "lib.so"
            cc = _run(toolchain.compile_cmd(gen, out, opt), timeout, "compilation", filename)
            if cc.returncode != 0:
                raise _compile_error("compilation", cc.stderr, src, filename, source)
            _atomic_write(meta_path, json.dumps(meta).encode())
            os.replace(out, so)
    write_manifest(root, k1, k2, src, result.files)
    return Built(so, meta, cached, time.perf_counter() - t0)

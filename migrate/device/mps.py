"""MPS backend: a thin wrapper of torch.mps.compile_shader with the CPU
backend's interface. UNTESTED here (no Apple GPU); only its argument handling
(`prepare_call`, `embed_includes`) is unit-tested."""

from __future__ import annotations

import re
from pathlib import Path

from .errors import BackendUnavailable, KernelArgumentError, UnknownKernelError
from .launch import geometry

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](c10/metal/[^>"]+)[>"]', re.M)


def embed_includes(source: str, include_dirs: list[Path], seen: set[str] | None = None) -> str:
    """Inline `#include <c10/metal/...>` from include_dirs (compile_shader only
    knows the headers of the installed torch)."""
    seen = set() if seen is None else seen

    def repl(m: re.Match) -> str:
        rel = m.group(1)
        if rel in seen:
            return ""
        for d in include_dirs:
            f = Path(d) / rel
            if f.is_file():
                seen.add(rel)
                return embed_includes(f.read_text(), include_dirs, seen)
        return m.group(0)

    return _INCLUDE.sub(repl, source)


def prepare_call(name: str, args: tuple, threads, group_size) -> tuple[list, dict]:
    """Validate/normalise one launch: numpy arrays -> MPS tensors, CPU tensors
    rejected, geometry as 3-lists."""
    out = []
    for i, a in enumerate(args):
        if type(a).__module__ == "numpy" and hasattr(a, "__array_interface__"):
            import torch

            a = torch.from_numpy(a).to("mps")
        elif (
            hasattr(a, "device")
            and hasattr(a, "data_ptr")
            and getattr(a.device, "type", "mps") != "mps"
            and a.dim() > 0
        ):
            raise KernelArgumentError(f"{name}: argument {i} is on {a.device}; the mps backend needs MPS tensors")
        elif isinstance(a, (list, tuple)) and not all(isinstance(v, (int, float, bool)) for v in a):
            raise KernelArgumentError(f"{name}: argument {i}: tuples/lists must hold numbers")
        elif a is None:
            raise KernelArgumentError(f"{name}: argument {i} is None")
        out.append(a)
    t, g = geometry(out, threads, group_size)
    return out, {"threads": list(t), "group_size": list(g)}


class MpsLibrary:
    def __init__(self, lib):
        self._lib = lib

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            fn = getattr(self._lib, name)
        except AttributeError:
            raise UnknownKernelError(f"no kernel named {name!r} in this library") from None

        def call(*args, threads=None, group_size=None, checked=None):
            a, kw = prepare_call(name, args, threads, group_size)
            return fn(*a, **kw)

        return call

    def __dir__(self):
        return dir(self._lib)


def mps_available() -> bool:
    """An Apple GPU that torch can use."""
    try:
        import torch
    except ImportError:
        return False
    return bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_available())


class MpsBackend:
    name = "mps"

    def __init__(self, root: str | Path | None = None):
        if not mps_available():
            raise BackendUnavailable("the mps backend needs an Apple GPU (torch.backends.mps.is_available())")
        self.root = Path(root) if root is not None else None

    def compile_shader(self, source: str, include_dirs=None, **_ignored) -> MpsLibrary:
        import torch

        dirs = [Path(p) for p in include_dirs or []]
        if self.root is not None and (self.root / "c10" / "metal").is_dir():
            dirs.append(self.root)
        return MpsLibrary(torch.mps.compile_shader(embed_includes(source, dirs) if dirs else source))

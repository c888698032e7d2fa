"""Where the declarative tables (rules/) and Metal assets (kernels/) live.

In a wheel they are packaged as migrate/_data/{rules,kernels}; in a source
checkout (editable install) they are the repository's top-level folders.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    packaged = _PKG / "_data" / name
    if packaged.is_dir():
        return packaged
    return _PKG.parent / name


def rules_dir() -> Path:
    return data_dir("rules")


def kernels_dir() -> Path:
    return data_dir("kernels")


def installed_torch_dir() -> Path | None:
    """The installed torch package's folder, located without importing torch (import costs ~1 s)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    return Path(spec.origin).resolve().parent if spec is not None and spec.origin else None


def torch_include_dir() -> Path | None:
    """The installed torch's ``include`` folder when it ships ``c10/metal``."""
    torch_dir = installed_torch_dir()
    inc = torch_dir / "include" if torch_dir else None
    return inc if inc is not None and (inc / "c10" / "metal").is_dir() else None


def python_module(module: str, *args: str) -> list[str]:
    """The command running ``python -m module args`` in this interpreter. ``-P``: the working folder is not put
    on ``sys.path``, so run from a PyTorch checkout, its ``torch/`` and ``torchgen/`` never shadow the
    installed packages (the checkout's torchgen writes code for its own era's headers)."""
    import sys

    return [sys.executable, "-P", "-m", module, *args]

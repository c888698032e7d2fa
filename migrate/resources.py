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

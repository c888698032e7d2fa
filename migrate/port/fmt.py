"""Generated kernel text in the tree's own format: clang-format with the tree's ``.clang-format``.

Each inserted chunk is a whole top-level text (a functor, a kernel template, a macro, registration
lines), so it is formatted on its own and the port stays a list of small insertions.  Without a
clang-format binary (pip's ``clang-format`` wheel is in the [verify] extra) or a ``.clang-format`` in the
tree, the text stays as emitted (already written in clang-format's LLVM-like shape); so does it while a
port is planned for its verdict alone (``port --list``, ``status``: verdict_only).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from migrate.model import Edit
from migrate.port import verdict_only


@lru_cache(maxsize=1)
def clang_format() -> str | None:
    here = Path(sys.executable).parent / "clang-format"
    return str(here) if here.is_file() else shutil.which("clang-format")


def _formatter(root: Path) -> tuple[str, str] | None:
    """(clang-format binary, the tree's style file) when generated text is to be formatted, else None."""
    style, exe = root / ".clang-format", clang_format()
    if exe is None or not style.is_file() or verdict_only.active():
        return None
    return exe, str(style)


def format_edits(root: Path, edits: list[Edit], suffix: str = ".metal") -> list[Edit]:
    how = _formatter(root)
    if how is None:
        return edits
    out = []
    for e in edits:
        if not e.path.endswith(suffix) or not e.replacement.strip():
            out.append(e)
            continue
        out.append(Edit(e.path, e.start, e.end, _format(*how, e.path, e.replacement)))
    return out


def format_text(root: Path, path: str, text: str) -> str:
    """``text`` (one top-level chunk of ``path``) in the tree's clang-format style; as it is without one."""
    how = _formatter(root)
    return text if how is None else _format(*how, path, text)


@lru_cache(maxsize=256)
def _format(exe: str, style: str, path: str, text: str) -> str:
    lead = text[: len(text) - len(text.lstrip("\n"))]
    body = text[len(lead) :]
    try:
        r = subprocess.run(
            [exe, f"--style=file:{style}", f"--assume-filename={Path(path).name}"],
            input=body.encode(),
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return text
    if r.returncode != 0:
        return text
    new = r.stdout.decode()
    return lead + (new if new.endswith("\n") or not body.endswith("\n") else new + "\n")

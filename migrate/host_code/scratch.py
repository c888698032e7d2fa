"""A scratch copy of a PyTorch tree for host runs of edited code: the ``aten/src/ATen/native/mps`` folder and
``native_functions.yaml`` copied (what ports edit), everything else linked to the original."""

from __future__ import annotations

import shutil
from pathlib import Path

MPS = Path("aten/src/ATen/native/mps")
YAML = Path("aten/src/ATen/native/native_functions.yaml")


def scratch_copy(tree: Path, dest: Path) -> Path:
    """``dest/tree``: ``tree`` with its mps folder and yaml copied, the rest symlinked."""
    root = dest / "tree"
    native = root / YAML.parent
    native.mkdir(parents=True)
    for top in tree.iterdir():
        if top.name != "aten":
            (root / top.name).symlink_to(top.resolve())
    for entry in (tree / "aten/src/ATen").iterdir():
        if entry.name != "native":
            (root / "aten/src/ATen" / entry.name).symlink_to(entry.resolve())
    for entry in (tree / YAML.parent).iterdir():
        if entry.name == YAML.name:
            shutil.copy(entry, native / entry.name)
        elif entry.name != "mps":
            (native / entry.name).symlink_to(entry.resolve())
    shutil.copytree(tree / MPS, root / MPS, symlinks=False)
    return root

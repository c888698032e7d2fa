"""load_tree lists a tree's MPS sources by string joins: the files and order of the Path walk."""

from __future__ import annotations

import pytest

from migrate.tree import HOST_SUFFIXES, MPS_REL, NATIVE_REL, _walk, _walk_rel
from tests.corpus import pytorch_270a0_root
from tests.helpers import FIXTURES


@pytest.mark.parametrize("root", ["mini", "port", "review", "2.7.0a0"])
def test_walk_rel_lists_what_the_path_walk_lists(root):
    root = pytorch_270a0_root() if root == "2.7.0a0" else FIXTURES / root
    suffixes = HOST_SUFFIXES + (".metal",)
    want = [f.relative_to(root).as_posix() for f in _walk(root / MPS_REL, suffixes)]
    assert want and _walk_rel(root, MPS_REL, suffixes) == want


@pytest.mark.parametrize("root", ["mini", "2.7.0a0"])
def test_walk_rel_leaves_out_the_skipped_folder(root):
    """The native sources' walk (load_tree's stub scans) leaves out mps/, at any depth of its files."""
    real = root == "2.7.0a0"
    root = pytorch_270a0_root() if real else FIXTURES / root
    mps = (root / MPS_REL).as_posix() + "/"
    want = [
        f.relative_to(root).as_posix()
        for f in _walk(root / NATIVE_REL, (".h", ".cpp"))
        if not f.as_posix().startswith(mps)
    ]
    got = _walk_rel(root, NATIVE_REL, (".h", ".cpp"), skip=MPS_REL)
    assert want and got == want
    if real:  # its mps/ holds headers: the skip is what leaves them out
        assert len(got) < len(_walk_rel(root, NATIVE_REL, (".h", ".cpp")))

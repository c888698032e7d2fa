"""The MPS registrations of chosen operators, cut from torchgen's ``RegisterMPS_0.cpp``.

torchgen writes one block per operator (its wrappers, one ``TORCH_LIBRARY_IMPL(aten, MPS, m)`` and the
``at::mps::`` functions), each opening with the same ``namespace at {`` and comment. A host build registers only
the family's operators (and what they call): the rest would need the whole tree's host code, and would shadow
the fake device's own factory and copy kernels.
"""

from __future__ import annotations

import re
from pathlib import Path

_BLOCK = "namespace at {\n// NB: TORCH_LIBRARY_IMPL must be in an anonymous namespace"
_IMPL = re.compile(r'm\.impl\("([^"]+)"')


def blocks(text: str) -> tuple[str, list[tuple[frozenset[str], str]]]:
    """(the file's head, [(the overloads a block registers, its text)])."""
    parts = text.split(_BLOCK)
    head, rest = parts[0], parts[1:]
    return head, [(frozenset(_IMPL.findall(part)), _BLOCK + part) for part in rest]


def select(text: str, operators: set[str]) -> tuple[str, set[str]]:
    """The file with only the blocks registering one of ``operators`` (names without overload) and the overloads
    it registers."""
    head, found = blocks(text)
    kept, registered = [head], set()
    for names, part in found:
        if any(n.partition(".")[0] in operators for n in names):
            kept.append(part)
            registered |= names
    return "".join(kept), registered


def write_selected(decl: Path, operators: set[str], dest: Path) -> set[str]:
    text = (decl / "ATen" / "RegisterMPS_0.cpp").read_text(encoding="utf-8")
    selected, registered = select(text, operators)
    if not dest.exists() or dest.read_text(encoding="utf-8") != selected:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(".tmp")
        tmp.write_text(selected, encoding="utf-8")
        tmp.replace(dest)
    return registered

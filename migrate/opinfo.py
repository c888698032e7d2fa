"""From an operator family to the OpInfo entries (and test commands) that exercise it."""

from __future__ import annotations

from pathlib import Path

from migrate.model import OpInfoEntry
from migrate.read.opinfo_reader import find_entries
from migrate.resources import installed_torch_dir
from migrate.tables import load_table


def installed_opinfo_files() -> list[Path]:
    """The OpInfo database files of the installed torch, read as text (never imported)."""
    torch_dir = installed_torch_dir()
    if torch_dir is None:
        return []
    site = torch_dir.parent
    return [f for pattern in load_table("opinfo.yaml")["files"] for f in sorted(site.glob(pattern))]


def installed_opinfo_file() -> Path | None:
    """The installed torch's main OpInfo database file."""
    files = installed_opinfo_files()
    return files[0] if files else None


def family_entries(index, family: str, installed: bool = False) -> list[OpInfoEntry]:
    """OpInfo entries testing ``family``: from the tree's OpInfo database, else (or when
    ``installed``) the installed torch's."""
    table = load_table("opinfo.yaml")
    names = index.opinfo_names(family)
    sources = [] if installed else [(p, index.tree.sources[p]) for p in index.tree.opinfo_files]
    if not sources:
        sources = [(str(f), f.read_bytes()) for f in installed_opinfo_files()]
    out = []
    for path, data in sources:
        for e in find_entries(data, path, names):
            if e.kind not in table["skip_kinds"] and index.family_of_opinfo(e.aten_name or e.name) == family:
                out.append(e)
    return out


def test_commands(index, family: str) -> list[str]:
    """``python test/test_mps.py -k test_output_match_<formatted name>`` for every OpInfo of the family."""
    names = sorted({e.formatted_name for e in family_entries(index, family)})
    return [f"python test/test_mps.py -k test_output_match_{n}" for n in names]


def print_next_steps(index, family: str, file=None) -> None:
    """After a fix or port: the exact test commands to run on a Mac, from the OpInfo database."""
    import sys

    file = file or sys.stderr
    commands = test_commands(index, family)
    if commands:
        print("mps-migrate: next, build PyTorch and run on a Mac:", file=file)
        for c in commands:
            print(f"  {c}", file=file)
        print(f"  and time it before/after: mps-migrate bench {family} --root TREE -o bench_{family}.py", file=file)
    else:
        print(f"mps-migrate: no OpInfo entry tests {family}: test it by hand", file=file)

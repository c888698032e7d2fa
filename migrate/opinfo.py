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


def _launches(index, function: str, family: str) -> bool:
    """Whether host function ``function`` names the kernel ``family`` (``exec_unary_kernel(iter, "i1")``,
    ``binary_mps_impl(iter, "zeta")``): a string literal of its body."""
    fn = index.definition(function)
    if fn is None:
        return False
    data = index.tree.sources.get(fn.path)
    if data is None:
        try:
            data = (index.tree.root / fn.path).read_bytes()
        except OSError:
            return False
    return f'"{family}"'.encode() in data[fn.span.start : fn.span.end]


def aten_names(index, family: str) -> list[str]:
    """The native functions (aten operator names) whose kernel is ``family``'s, read from the tree, no table:
    ``family`` itself when the tree declares it; those whose CPU kernel calls a stub the family's launch is
    registered for (``i1``: ``REGISTER_DISPATCH(special_i1_stub, ...)`` around ``exec_unary_kernel(iter, "i1")``,
    and ``special_i1.out`` calls ``special_i1_stub``); else ``special_i1``-like names the tree declares
    (rules/opinfo.yaml ``name_prefixes``)."""
    if family in index.families:  # a native function: its own (sub_out calling add_stub is not add's)
        return [family]
    out: list[str] = []
    stubs = {f"{family}_stub"}
    for stub, regs in index.registrations.items():
        if stub not in stubs and any(_launches(index, r.function, family) for r in regs):
            stubs.add(stub)
    for name, entries in index.families.items():
        for e in entries:
            lines = [d for d in e.dispatch if "MPS" not in d.keys]
            if any(stubs & set(index.stubs_of_shared_kernel(d.kernel_name)) for d in lines):
                out.append(name)
                break
    for repl in load_table("opinfo.yaml")["name_prefixes"].values():
        if repl and repl + family in index.families and repl + family not in out:
            out.append(repl + family)
    return out


def called_name(name: str) -> str:
    """An OpInfo (or alias) name as the aten name it calls: ``special.i1`` -> ``special_i1``,
    ``nn.functional.relu`` -> ``relu`` (rules/opinfo.yaml ``name_prefixes``)."""
    for prefix, repl in load_table("opinfo.yaml")["name_prefixes"].items():
        if name.startswith(prefix):
            return repl + name[len(prefix) :]
    return name


def calls_of(name: str, aten_name: str | None, aliases=()) -> set[str]:
    """What an OpInfo calls: its ``aten_name`` (or its name, namespace mapped) and its aliases'."""
    return {aten_name or called_name(name), called_name(name), *(called_name(a) for a in aliases)}


def family_calls(index, family: str) -> set[str]:
    """The aten names an OpInfo of ``family`` calls: the family and aten_names."""
    return {family, *aten_names(index, family)}


def family_entries(index, family: str, installed: bool = False) -> list[OpInfoEntry]:
    """OpInfo entries testing ``family``, found by what they call (``aten_name``, aliases, the
    ``special.``/``linalg.``/``nn.functional.`` namespaces; every variant): from the tree's OpInfo
    database, else (or when ``installed``) the installed torch's."""
    table = load_table("opinfo.yaml")
    calls = family_calls(index, family)
    sources = [] if installed else [(p, index.tree.sources[p]) for p in index.tree.opinfo_files]
    if not sources:
        sources = [(str(f), f.read_bytes()) for f in installed_opinfo_files()]
    out = []
    for path, data in sources:
        for e in find_entries(data, path):
            if e.kind in table["skip_kinds"]:
                continue
            if (
                calls & calls_of(e.name, e.aten_name, e.aliases)
                or index.family_of_opinfo(e.aten_name or e.name) == family
            ):
                out.append(e)
    return out


def test_commands(index, family: str) -> list[str]:
    """``python test/test_mps.py -k test_output_match_<formatted name>`` for every OpInfo of the family."""
    names = sorted({e.formatted_name for e in family_entries(index, family)})
    return [f"python test/test_mps.py -k test_output_match_{n}" for n in names]


def caller_test_command(opinfo: str, family: str) -> str:
    """The test_mps command testing ``family`` through the OpInfo ``opinfo`` ("name" or "name:variant") that calls
    it: its gradient test for a backward family, else its output test."""
    formatted = opinfo.replace(":", ".").replace(".", "_")  # OpInfo.formatted_name: its full name, dots as _
    test = "test_output_grad_match" if "_backward" in family else "test_output_match"
    return f"python test/test_mps.py -k {test}_{formatted}"


def print_next_steps(index, family: str, file=None, called_by: str = "") -> None:
    """After a fix or port: the exact test commands to run on a Mac, from the OpInfo database; ``called_by``: the
    OpInfo whose op calls a family no OpInfo tests directly."""
    import sys

    file = file or sys.stderr
    commands = test_commands(index, family) or ([caller_test_command(called_by, family)] if called_by else [])
    if commands:
        print("mps-migrate: next, build PyTorch and run on a Mac:", file=file)
        for c in commands:
            print(f"  {c}", file=file)
        print(f"  and time it before/after: mps-migrate bench {family} --root TREE -o bench_{family}.py", file=file)
    else:
        print(f"mps-migrate: no OpInfo entry tests {family}: test it by hand", file=file)

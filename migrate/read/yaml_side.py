"""What native_functions.yaml alone says, worked out once per NativeYaml: the index's yaml-only maps.

Below both the tree (whose parse job works them out) and the index (which reads them)."""

from __future__ import annotations

from collections import defaultdict

from migrate.model import DispatchLine, NativeEntry, NativeYaml

MPS = "MPS"


class YamlSide:
    """What native_functions.yaml alone says: overload, family and kernel maps, MPS lines.  Worked out once per
    NativeYaml (yaml_side), all in one pass over the entries, on first use; a cold lint does it in the parse
    phase (tree.read_yaml_job), where the other process's share of the parse balances it, instead of after the
    parse, when only this process works.

    ``entries``: overload name -> entry.  ``families``: operator family (NativeEntry.base_name) -> its entries,
    in yaml order.  ``yaml_kernels``: kernel name -> every (entry, line) that names it, any dispatch key.
    ``entries_by_name``: operator names (``remainder``, ``add_``): ``at::NAME(...)`` calls one of them.
    ``mps_lines``: id(entry) -> its MPS line or None (rules ask ~10k times for ~3k entries).  ``mps_entries``:
    (entry, its MPS line) for the entries that have one, in yaml order (the rules' loops).
    ``kernel_families``: families with an overload that reaches a kernel through MPS (a structured_delegate
    or an MPS line)."""

    MAPS = ("entries", "families", "yaml_kernels", "entries_by_name", "mps_lines", "mps_entries", "kernel_families")
    entries: dict[str, NativeEntry]
    families: dict[str, list[NativeEntry]]
    yaml_kernels: dict[str, list[tuple[NativeEntry, DispatchLine]]]
    entries_by_name: frozenset[str]
    mps_lines: dict[int, DispatchLine | None]
    mps_entries: list[tuple[NativeEntry, DispatchLine]]
    kernel_families: frozenset[str]

    def __init__(self, yaml: NativeYaml) -> None:
        self.yaml = yaml

    def __getattr__(self, name: str):
        if name not in YamlSide.MAPS:
            raise AttributeError(name)
        self.work_out()
        return self.__dict__[name]

    def work_out(self) -> None:
        """Every map now (the parse phase's share of the index)."""
        if "entries" in self.__dict__:
            return
        entries: dict[str, NativeEntry] = {}
        families: dict[str, list[NativeEntry]] = defaultdict(list)
        kernels: dict[str, list[tuple[NativeEntry, DispatchLine]]] = defaultdict(list)
        lines: dict[int, DispatchLine | None] = {}
        mps_entries: list[tuple[NativeEntry, DispatchLine]] = []
        reaching: set[str] = set()
        for e in self.yaml.entries:
            entries[e.overload_name] = e
            base = e.base_name
            families[base].append(e)
            line = None
            for d in e.dispatch:
                kernels[d.kernel_name].append((e, d))
                if MPS in d.keys:
                    line = d  # the last, as NativeEntry.kernel_for
            lines[id(e)] = line
            if line is not None:
                mps_entries.append((e, line))
            if line is not None or e.structured_delegate:
                reaching.add(base)
        self.__dict__.update(
            entries=entries,
            families=families,
            yaml_kernels=kernels,
            entries_by_name=frozenset(e.name for e in self.yaml.entries),
            mps_lines=lines,
            mps_entries=mps_entries,
            kernel_families=frozenset(reaching),
        )


def yaml_side(yaml: NativeYaml) -> YamlSide:
    """The YamlSide of this yaml model, kept on it (a frozen model: its fields, and so its equality and its codec
    form, stay as they are)."""
    side = yaml.__dict__.get("_yaml_side")
    if side is None:
        side = yaml.__dict__["_yaml_side"] = YamlSide(yaml)
    return side

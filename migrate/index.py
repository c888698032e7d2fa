"""Cross-references over the model: the effective MPS route of every overload."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from migrate.model import (
    DispatchLine,
    HostFunction,
    Impl,
    KernelRegistration,
    NativeEntry,
    Route,
    Span,
    StubRegistration,
    Via,
    instance,
)
from migrate.tables import dispatch_keys, load_markers, load_table
from migrate.read.yaml_side import MPS, YamlSide, yaml_side
from migrate.tree import Tree, file_kind

_MPS_NAME = re.compile(r"(^|_)mps(_|$)")


def looks_mps_only(kernel: str) -> bool:
    """Convention: an MPS-only implementation carries ``mps`` in its name."""
    return bool(_MPS_NAME.search(kernel))


def is_shared(line: DispatchLine) -> bool:
    """A dispatch line that gives MPS the same kernel as a real device backend."""
    keys = line.keys
    return MPS in keys and not _shared_keys().isdisjoint(keys)


@lru_cache(maxsize=None)
def _shared_keys() -> frozenset[str]:
    return frozenset(dispatch_keys("shared_with"))


def under(path: str, prefixes: list[str]) -> bool:
    """Is ``path`` one of ``prefixes`` or inside one of them ("" and "." hold everything)?"""
    return any(p in ("", ".") or path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def stub_candidates(kernel: str) -> list[str]:
    """Stub names a shared kernel plausibly calls (``atan2_out`` -> ``atan2_stub``)."""
    base = kernel
    names = [base + "_stub"]
    for suffix in ("_out", "_"):
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            names.append(base + "_stub")
    return names


def is_implementation(f: HostFunction) -> bool:
    """Yaml-kernel-shaped definitions: TORCH_IMPL_FUNC or a non-static *_mps function."""
    return f.kind == "impl_func" or (looks_mps_only(f.name) and not f.is_static)


@dataclass
class Index:
    tree: Tree
    markers: dict[str, frozenset[str]] = field(default_factory=load_markers)
    scope: list[str] | None = None  # paths whose findings are wanted (None: all); per-file analyses skip the rest

    def in_scope(self, path: str) -> bool:
        return self.scope is None or under(path, self.scope)

    # ------------------------------------------------------------ yaml side
    @cached_property
    def _yaml(self) -> YamlSide:
        return yaml_side(self.tree.yaml)

    entries = cached_property(lambda self: self._yaml.entries)
    families = cached_property(lambda self: self._yaml.families)
    yaml_kernels = cached_property(lambda self: self._yaml.yaml_kernels)
    entries_by_name = cached_property(lambda self: self._yaml.entries_by_name)
    _mps_lines = cached_property(lambda self: self._yaml.mps_lines)
    mps_entries = cached_property(lambda self: self._yaml.mps_entries)
    kernel_families = cached_property(lambda self: self._yaml.kernel_families)

    def root_kernels(self, op: str) -> set[str]:
        """Native names the per-operator header of ``op`` (an operator root name) declares."""
        names: set[str] = set()
        for e in self.families.get(op, ()):
            for d in e.dispatch:
                k = d.kernel_name
                names.add(k)
                names.add("structured_" + k)
            if e.structured:
                names.add("structured_" + e.name)
        return names

    def used_by_other_backend(self, kernel: str) -> bool:
        return any(MPS not in d.keys for _, d in self.yaml_kernels.get(kernel, ()))

    # ------------------------------------------------------ unread content
    @cached_property
    def incomplete(self) -> dict[str, str]:
        """Files whose content was not, or only partly, read (path -> file kind)."""
        return {e.path: file_kind(e.path) for e in self.tree.errors if e.partial}

    def hidden_in(self, kind: str, name: str) -> list[str]:
        """Incompletely read files of ``kind`` that may hold ``name`` (no bytes at all, or bytes naming it)."""
        paths = [path for path, k in self.incomplete.items() if k == kind]
        if not paths:
            return paths  # most trees: no pattern to make for each name asked
        word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
        return [path for path in paths if path not in self.tree.sources or word.search(self.tree.sources[path])]

    def _unread_note(self, kind: str, name: str, what: str) -> tuple[str, ...]:
        paths = self.hidden_in(kind, name)
        return (f"{paths[0]} could not be read completely: {what} may be there",) if paths else ()

    # ------------------------------------------------------------ host side
    @cached_property
    def functions(self) -> dict[str, list[HostFunction]]:
        out: dict[str, list[HostFunction]] = defaultdict(list)
        for hf in self.tree.hosts.values():
            for f in hf.functions:
                out[f.name].append(f)
        return out

    @cached_property
    def registrations(self) -> dict[str, list[StubRegistration]]:
        out: dict[str, list[StubRegistration]] = defaultdict(list)
        for hf in self.tree.hosts.values():
            for r in hf.registrations:
                out[r.stub].append(r)
        return out

    @cached_property
    def host_identifiers(self) -> frozenset[str]:
        """Identifiers some host file uses (definition names excluded)."""
        return frozenset().union(*(hf.identifiers for hf in self.tree.hosts.values()))

    # ----------------------------------------------------------- metal side
    @cached_property
    def functor_registrations(self) -> dict[str, list[KernelRegistration]]:
        out: dict[str, list[KernelRegistration]] = defaultdict(list)
        for mf in self.tree.metals.values():
            for r in mf.registrations:
                out[r.op].append(r)
        return out

    @cached_property
    def host_names(self) -> frozenset[str]:
        """Every kernel name the tree's Metal libraries export."""
        return frozenset().union(*(mf.exports for mf in self.tree.metals.values()))

    def metal_kernel_exists(self, name: str) -> bool:
        """Is a Metal kernel named ``name`` (or a family ``name_*``) registered anywhere?"""
        if name in self.functor_registrations or name in self.host_names:
            return True
        prefix = name + "_"
        return any(h.startswith(prefix) for h in self.host_names)

    # ------------------------------------------------------- classification
    def impl_of(self, name: str) -> Impl:
        """What ``name`` runs, following same-tree calls."""
        if name not in self.functions:
            return Impl.UNDEFINED
        got = self._impl_cache.get(name)
        if got is None:
            got = self._impl_cache[name] = self._classify(name)
        return got

    @cached_property
    def _impl_cache(self) -> dict[str, Impl]:
        return {}

    def marker_closure(self, name: str) -> frozenset[str]:
        """Markers used by ``name`` and, transitively, the same-tree helpers it calls.

        A call to a marker (Placeholder, runMPSGraph, ...) counts as that marker; its body
        (Placeholder gathers strided views with Metal) is not followed, nor are neutral
        data-movement helpers.  Memoised; inside a call cycle a member may see a partial set.
        """
        memo = self._closure_memo
        if name in memo:
            return memo[name]
        memo[name] = frozenset()  # in progress: cycles stop here
        found: set[str] = set()
        followed = self._followed.__contains__
        for f in self.functions.get(name, ()):
            found |= f.markers
            for c in filter(followed, f.calls):  # in the calls' own order: it decides what a cycle's members see
                if c != name:
                    found |= memo[c] if c in memo else self.marker_closure(c)
        memo[name] = result = frozenset(found)
        return result

    @cached_property
    def _closure_memo(self) -> dict[str, frozenset[str]]:
        return {}

    @cached_property
    def _followed(self) -> frozenset[str]:
        """Same-tree functions whose bodies marker_closure follows."""
        return frozenset(self.functions).difference(self._stop_at)

    @cached_property
    def _stop_at(self) -> frozenset[str]:
        """Calls whose bodies classification does not follow: markers and neutral helpers."""
        return frozenset().union(*self.markers.values())

    def _classify(self, name: str) -> Impl:
        m = self.marker_closure(name)
        graph = bool(m & self.markers["mpsgraph"])
        metal = bool(m & self.markers["metal"])
        if graph and metal:
            return Impl.MIXED
        return Impl.MPSGRAPH if graph else Impl.METAL if metal else Impl.DELEGATING

    def definition(self, name: str) -> HostFunction | None:
        defs = self.functions.get(name)
        return defs[0] if defs else None

    # --------------------------------------------------------------- routes
    def stubs_reached(self, kernel: str) -> list[str]:
        """Dispatch stubs a shared kernel's native definition reaches on MPS: the scan's names that are
        declared or registered stubs, or named ``*_stub`` (a partial tree may lack the declaring header)."""
        return list(self._stubs_reached(kernel))

    def _stubs_reached(self, kernel: str) -> tuple[str, ...]:
        got = self._stubs_memo.get(("reached", kernel))
        if got is None:
            declared, registered = self.tree.declared_stubs, self.registrations
            got = self._stubs_memo["reached", kernel] = tuple(
                sorted(
                    s
                    for s in self.tree.cpu_stub_calls.get(kernel, ())
                    if s in declared or s in registered or s.endswith("_stub")
                )
            )
        return got

    def operators_called(self, kernel: str) -> list[str]:
        """Operators a shared kernel's native definition calls (``at::remainder``); [] if it reaches a stub."""
        return list(self._operators_called(kernel))

    def _operators_called(self, kernel: str) -> tuple[str, ...]:
        got = self._stubs_memo.get(("operators", kernel))
        if got is None:
            if self._stubs_reached(kernel):
                got = ()
            else:
                names = self.entries_by_name
                got = tuple(
                    sorted(
                        c
                        for c in self.tree.native_at_calls.get(kernel, ())
                        if c in names or c.removesuffix("_outf") in names or c.removesuffix("_out") in names
                    )
                )
            self._stubs_memo["operators", kernel] = got
        return got

    def stubs_of_shared_kernel(self, kernel: str) -> list[str]:
        return list(self._stubs_of_shared_kernel(kernel))

    def _stubs_of_shared_kernel(self, kernel: str) -> tuple[str, ...]:
        got = self._stubs_memo.get(("shared", kernel))
        if got is None:
            if self._operators_called(kernel):
                got = ()  # a composite wrapper: it redispatches, it calls no stub
            else:
                got = self._stubs_reached(kernel) or tuple(
                    s for s in stub_candidates(kernel) if s in self.registrations or s in self.tree.declared_stubs
                )
            self._stubs_memo["shared", kernel] = got
        return got

    @cached_property
    def _stubs_memo(self) -> dict[tuple[str, str], tuple[str, ...]]:
        """(question, kernel) -> the answer of stubs_reached, operators_called or stubs_of_shared_kernel."""
        return {}

    def mps_line(self, entry: NativeEntry) -> DispatchLine | None:
        got = self._mps_lines.get(id(entry), entry)  # rules ask ~10k times for ~3k entries
        return entry.kernel_for(MPS) if got is entry else got

    @cached_property
    def routes(self) -> Mapping[str, Route]:
        """Overload -> its route, in yaml order; each route is worked out when first read."""
        return _Routes(self)

    def _route(self, e: NativeEntry, seen: set[str]) -> Route:
        line = self.mps_line(e)
        if line is not None:  # the same for every delegate reaching it: worked out once
            got = self._explicit_memo.get(id(e))
            if got is None:
                got = self._explicit_memo[id(e)] = self._explicit_route(e, line)
            return got
        name = e.overload_name
        path = self.tree.yaml.path
        delegate = e.structured_delegate
        if delegate:
            yaml_at = f"{path}:{e.func_line}"
            target = self.entries.get(delegate)  # keyed by overload name: the target's is ``delegate``
            if target is None or delegate in seen:
                return _new_route(
                    name,
                    None,
                    Via.DELEGATE,
                    Impl.UNDEFINED,
                    None,
                    (f"structured_delegate {delegate} (not found) @ {yaml_at}",),
                    delegate=delegate,
                )
            seen.add(name)
            r = self._route(target, seen)
            return _new_route(
                name,
                r.kernel,
                Via.DELEGATE,
                r.impl,
                r.defined_at,
                (f"structured_delegate: {delegate} @ {yaml_at}", *r.hops),
                delegate=delegate,
            )
        if e.dispatch:
            for key in self._composite_keys:
                d = e.kernel_for(key)
                if d is not None:
                    hop = f"{key}: {d.kernel_name} @ {path}:{d.line}"  # routes name ~1k lines whose spans no one reads
                    return _new_route(name, d.kernel_name, Via.COMPOSITE, Impl.DELEGATING, None, (hop,))
        yaml_at = f"{path}:{e.func_line}"
        if not e.dispatch and not e.structured:
            return _new_route(
                name,
                e.name,
                Via.COMPOSITE,
                Impl.DELEGATING,
                None,
                (f"CompositeImplicitAutograd (no dispatch block) @ {yaml_at}",),
            )
        return _new_route(name, None, Via.NONE, Impl.UNDEFINED, None, (f"no MPS kernel @ {yaml_at}",))

    @cached_property
    def _explicit_memo(self) -> dict[int, Route]:
        return {}

    @cached_property
    def _composite_keys(self) -> tuple[str, ...]:
        return dispatch_keys("composite")

    def _explicit_route(self, e: NativeEntry, line: DispatchLine) -> Route:
        k = line.kernel_name
        hops = [f"{', '.join(line.keys)}: {line.kernel} @ {self.tree.yaml.path}:{line.line}"]
        if len(e.dispatch) > 1:
            hops += _shadowed_mps(e, line)
        if (is_shared(line) or self.used_by_other_backend(k)) and k not in self.functions:
            for stub in self._stubs_of_shared_kernel(k):
                for reg in self.registrations.get(stub, ()):
                    fn = self.definition(reg.function)
                    hops.append(f"{reg.macro}({stub}, {reg.function}) @ {reg.span.where}")
                    where = fn.span if fn else reg.span
                    if fn:
                        hops.append(f"{fn.name} @ {where.where}")
                    return _new_route(e.overload_name, k, Via.EXPLICIT, self.impl_of(reg.function), where, tuple(hops))
            stubs = self._stubs_of_shared_kernel(k)
            if any(s in self.tree.declared_stubs or s in self.tree.cpu_stub_calls.get(k, ()) for s in stubs):
                notes = [n for s in stubs for n in self._unread_note("host", s, f"the MPS registration of {s}")]
                return _new_route(
                    e.overload_name,
                    k,
                    Via.EXPLICIT,
                    Impl.UNDEFINED,
                    None,
                    (*hops, "stub has no MPS registration", *notes[:1]),
                )
            ops = self._operators_called(k)
            why = f"composite: calls {', '.join('at::' + o for o in ops)}" if ops else "shared backend-agnostic kernel"
            return _new_route(e.overload_name, k, Via.EXPLICIT, Impl.DELEGATING, None, (*hops, why))
        fn = self.definition(k)
        if fn is None:
            return _new_route(
                e.overload_name,
                k,
                Via.EXPLICIT,
                Impl.UNDEFINED,
                None,
                (*hops, "kernel not defined in the tree", *self._unread_note("host", k, "its definition")),
            )
        hops.append(f"{fn.name} ({fn.kind}) @ {fn.span.where}")
        if fn.path in self.incomplete:
            hops.append(f"{fn.path} could not be read completely: this route may be incomplete")
        return _new_route(e.overload_name, k, Via.EXPLICIT, self.impl_of(k), fn.span, tuple(hops))

    # ------------------------------------------------------- dead and live
    @cached_property
    def dead_functions(self) -> list[HostFunction]:
        out = []
        for hf in self.tree.hosts.values():
            if not hf.path.endswith(".mm"):
                continue
            for f in hf.functions:
                if not is_implementation(f):
                    continue
                if f.name in self.yaml_kernels or f.name in self.host_identifiers:
                    continue
                if len(self.functions.get(f.name, ())) > 1 and f.kind != "impl_func":
                    continue  # overloads: cannot tell which one is unused
                out.append(f)
        return out

    def live_names(self, path: str, removed: list[HostFunction] | None = None) -> set[str]:
        """Names that live code of ``path`` defines or uses: without the dead functions, or ``removed``."""
        hf = self.tree.hosts[path]
        dead = [f for f in (self.dead_functions if removed is None else removed) if f.path == path]
        names = set(hf.identifiers)  # the file's identifiers hold each body's (model.HostFile)
        if dead:
            for f in dead:
                names -= f.identifiers
            for f in hf.functions:
                if f not in dead:
                    names |= f.identifiers  # what a dead function shared with a live one
        names.update(f.name for f in hf.functions if f not in dead)
        return names

    # ------------------------------------------------------- families, sites
    def family_of_opinfo(self, key: str) -> str | None:
        candidates = [key]
        for prefix, repl in load_table("opinfo.yaml")["name_prefixes"].items():
            if key.startswith(prefix):
                candidates.append(repl + key[len(prefix) :])
        return next((c for c in candidates if c in self.families), None)

    def opinfo_names(self, family: str) -> list[str]:
        """OpInfo names that may test ``family`` (the inverse of family_of_opinfo)."""
        names = [family]
        for prefix, repl in load_table("opinfo.yaml")["name_prefixes"].items():
            if family.startswith(repl):
                names.append(prefix + family[len(repl) :])
        return names

    def family_is_native_metal(self, family: str) -> bool:
        routes = [self.routes[e.overload_name] for e in self.families.get(family, ())]
        kernel_routes = [r for r in routes if r.via is not Via.COMPOSITE]
        return bool(kernel_routes) and all(r.impl is Impl.METAL for r in kernel_routes)

    def sites(self, kind: str):
        for hf in self.tree.hosts.values():
            for s in getattr(hf, "sites", ()):
                if s.kind == kind:
                    yield s

    @cached_property
    def fixes(self):
        from migrate.fixes import FixBuilder

        return FixBuilder(self)


def _shadowed_mps(e: NativeEntry, line: DispatchLine) -> list[str]:
    """What explain says of the entry's earlier lines naming MPS: ``line`` (the last) overrides them (MPS022)."""
    return [
        f"line {d.line} ({', '.join(d.keys)}: {d.kernel}) names MPS too, without effect: this later line wins (MPS022)"
        for d in e.dispatch
        if d is not line and MPS in d.keys
    ]


def _new_route(
    overload: str,
    kernel: str | None,
    via: Via,
    impl: Impl,
    defined_at: Span | None,
    hops: tuple[str, ...],
    delegate: str | None = None,
) -> Route:
    """``Route(...)``, made by model.instance: the index makes a route for each of ~3k overloads."""
    return instance(
        Route,
        {
            "overload": overload,
            "kernel": kernel,
            "via": via,
            "impl": impl,
            "defined_at": defined_at,
            "hops": hops,
            "delegate": delegate,
        },
    )


class _Routes(Mapping):
    """Index.routes: a read-only mapping whose routes are made on first read (lint reads few)."""

    def __init__(self, ix: Index) -> None:
        self._ix = ix
        self._made: dict[str, Route] = {}

    def __getitem__(self, overload: str) -> Route:
        got = self._made.get(overload)
        if got is None:
            e = self._ix.entries[overload]  # the last entry of that name, as a dict built in order keeps
            got = self._made[overload] = self._ix._route(e, set())
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._ix.entries)  # overload names in yaml order, each once

    def __len__(self) -> int:
        return len(self._ix.entries)

    def __contains__(self, overload: object) -> bool:
        return overload in self._ix.entries

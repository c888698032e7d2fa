"""Read a PyTorch (or PyTorch-like, partial) tree into the typed model."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from migrate.cache import cached, enabled
from migrate.errors import UsageError
from migrate.model import CommonMps, HostFile, MetalFile, NativeYaml, ParseError, Span
from migrate.read.yaml_side import yaml_side
from migrate.resources import torch_include_dir

YAML_REL = "aten/src/ATen/native/native_functions.yaml"
MPS_REL = "aten/src/ATen/native/mps"
NATIVE_REL = "aten/src/ATen/native"
COMMON_MPS_REL = "torch/testing/_internal/common_mps.py"
C10_METAL_REL = "c10/metal"
HOST_SUFFIXES = (".mm", ".cpp", ".h")


def file_kind(rel: str) -> str:
    """What a tree-relative path holds: yaml, host, metal, common_mps, opinfo or native (rules' ``reads``)."""
    if rel == YAML_REL:
        return "yaml"
    if rel == COMMON_MPS_REL:
        return "common_mps"
    if rel.startswith(MPS_REL + "/"):
        return "metal" if rel.endswith(".metal") or ("/kernels/" in rel and rel.endswith(".h")) else "host"
    return "native" if rel.startswith(NATIVE_REL + "/") else "opinfo"


def find_root(start: Path, operand: tuple[str, str | None] | None = None) -> Path:
    """Walk up from ``start`` to the folder holding native_functions.yaml.  ``operand``: (the command, its
    first argument or None), named in the error when that argument is a path in a PyTorch tree: given where the
    command takes an operator name, the tree meant for ``--root``."""
    p = start.resolve()
    if not p.exists():
        raise UsageError("no such file or folder", str(start))
    root = _root_above(p)
    if root is not None:
        return root
    hint = ""
    if operand is not None and operand[1] and _root_above(Path(operand[1]).resolve()) is not None:
        command, path = operand
        hint = f"; {path} is in a PyTorch tree: give it as --root, after the operator (mps-migrate {command} OP --root {path})"
    raise UsageError(f"not inside a PyTorch tree (no {YAML_REL} in it or any parent folder){hint}", str(start))


def _root_above(p: Path) -> Path | None:
    """The folder holding native_functions.yaml at or above ``p`` (an existing path), else None."""
    if not p.exists():
        return None
    for d in [p, *p.parents] if p.is_dir() else list(p.parents):
        if (d / YAML_REL).is_file():
            return d
    return None


@dataclass
class Tree:
    root: Path
    yaml: NativeYaml
    hosts: dict[str, HostFile] = field(default_factory=dict)
    metals: dict[str, MetalFile] = field(default_factory=dict)
    common_mps: CommonMps | None = None
    declared_stubs: dict[str, Span] = field(default_factory=dict)  # stub -> its name in DECLARE_DISPATCH
    cpu_stub_calls: dict[str, frozenset[str]] = field(default_factory=dict)  # shared kernel -> stubs it reaches on MPS
    native_at_calls: dict[str, frozenset[str]] = field(default_factory=dict)  # shared kernel -> at:: functions it calls
    errors: list[ParseError] = field(default_factory=list)
    opinfo_files: list[str] = field(default_factory=list)  # OpInfo database files present in the tree
    sources: dict[str, bytes] = field(default_factory=dict)  # path -> bytes as read
    # load_tree's metal_work: (its key, the parse_pool.Child computing its value meanwhile)
    metal_work: tuple | None = field(default=None, compare=False, repr=False)


def _read(file: Path | str, rel: str, overlay: dict[str, bytes]) -> tuple[bytes | None, ParseError | None]:
    try:
        if rel in overlay:
            return overlay[rel], None
        with open(file, "rb") as fh:
            return fh.read(), None
    except OSError as exc:
        return None, ParseError(rel, 1, 1, f"cannot read file: {exc.strerror or exc}", partial=True)


def _read_bytes(tree: Tree, file: Path, rel: str, overlay: dict[str, bytes]) -> bytes | None:
    data, error = _read(file, rel, overlay)
    if error is not None:
        tree.errors.append(error)
    else:
        tree.sources[rel] = data
    return data


def _walk(base: Path, suffixes: tuple[str, ...]):
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(suffixes):
                yield Path(dirpath) / name


def _walk_rel(root: Path, rel: str, suffixes: tuple[str, ...], skip: str | None = None) -> list[str]:
    """``_walk(root / rel)``'s files, as root-relative posix paths (string joins: no Path per file); ``skip``: a
    root-relative folder left out."""
    top = os.path.join(root, rel)
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        sub = os.path.relpath(dirpath, top).replace(os.sep, "/")
        prefix = rel + "/" if sub == "." else f"{rel}/{sub}/"
        dirnames[:] = sorted(d for d in dirnames if prefix + d != skip)
        out += [prefix + name for name in sorted(filenames) if name.endswith(suffixes)]
    return out


def metal_include_dirs(root: Path) -> list[Path]:
    """Where ``#include <c10/metal/...>`` resolves: the tree, else the installed torch."""
    inc = torch_include_dir()
    return [d for d in (root if (root / C10_METAL_REL).is_dir() else None, inc) if d is not None]


def headers_digest(include_dirs: list[Path]) -> str:
    """Digest of the c10/metal headers Metal registrations expand against (a cache key part)."""
    import hashlib

    h = hashlib.blake2b(digest_size=12)
    for d in include_dirs:
        for f in sorted((d / C10_METAL_REL).glob("*.h")):
            h.update(str(f).encode() + f.read_bytes())
    return h.hexdigest()


def _lazy(module: str, name: str):
    """A reader imported on its first call: a run served from the cache never imports tree-sitter or libcst."""

    def call(*args, **kwargs):
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return call


def load_tree(root: Path, overlay: dict[str, bytes] | None = None, metal_work=None) -> Tree:
    """Read the tree at ``root``; ``overlay`` maps tree-relative paths to bytes used instead of the disk's.

    ``metal_work``: ``(key, function, lead)``; when a parse child runs, it calls ``function(metal_tree)`` on
    the tree's Metal view (metal_view) once it has parsed its share, and ``tree.metal_work`` holds ``key``
    and the pending value; else ``tree.metal_work`` is None and the caller does that work itself.
    ``lead(metal_bytes, other_bytes, xfail)``: how much longer ``function`` runs than the caller's work
    after the parse (parse_all's ``reserve``; ``xfail``: the tree has common_mps.py)."""
    from migrate.parse_pool import parse_all

    overlay = overlay or {}
    yaml_file = root / YAML_REL
    rel = YAML_REL
    try:
        ydata = overlay[rel] if rel in overlay else yaml_file.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read: {exc.strerror or exc}", str(yaml_file)) from None
    tree = Tree(root=root, yaml=NativeYaml(rel, ()))
    tree.sources[rel] = ydata

    mps = root / MPS_REL
    includes = metal_include_dirs(root)
    hdr = headers_digest(includes) if enabled() else ""  # a cache key part only
    jobs = [("yaml", rel, ydata, "migrate.tree:read_yaml_job", {}, ())]
    order: list[tuple[str, int | ParseError]] = []  # (path, its job or the error reading it), in walk order
    if mps.is_dir():
        on_disk = _walk_rel(root, MPS_REL, HOST_SUFFIXES + (".metal",))
        added = sorted(
            r
            for r in overlay
            if r.startswith(MPS_REL + "/") and r.endswith(HOST_SUFFIXES + (".metal",)) and r not in on_disk
        )  # files a patch creates
        for r in on_disk + added:
            data, error = _read(os.path.join(root, r), r, overlay)
            if data is None:
                order.append((r, error))
                continue
            tree.sources[r] = data
            order.append((r, len(jobs)))
            if file_kind(r) == "metal":
                jobs.append(
                    (
                        "metal",
                        r,
                        data,
                        "migrate.read.metal_reader:read_metal_source",
                        {"include_dirs": includes},
                        (hdr,),
                    )
                )
            else:
                jobs.append(("host", r, data, "migrate.tree:read_host_job", {"include_dirs": includes}, (hdr,)))
    native = _native_sources(root)  # scanned in the same queue (the stub facts of a modern tree: ~1.8 MB)
    first_native = len(jobs)
    jobs += [(_NATIVE_KIND[r.endswith(".h")], r, data, "migrate.tree:scan_native_job", {}, ()) for r, data in native]
    after, reserve = None, 0.0
    if metal_work is not None:
        key, work, lead = metal_work
        metal = sum(len(j[2]) for j in jobs if j[0] == "metal")
        other = sum(len(j[2]) for j in jobs if j[0] in ("yaml", "host"))
        xfail = COMMON_MPS_REL in overlay or (root / COMMON_MPS_REL).is_file()
        reserve = lead(metal, other, xfail)

        def after(models):  # in the parse child
            return work(metal_view(root, [(jobs[k], m) for k, m in enumerate(models)], includes))

    side: list[Tree] = []

    def between():  # in this process, while a parse child parses
        side.append(_side_files(root, overlay))

    # one pass over every file, on the machine's cores when many are uncached
    models, later = parse_all(jobs, after, between, reserve, _metal_job)
    if later is not None:
        tree.metal_work = (key, later)
    tree.yaml = models[0]
    tree.errors.extend(tree.yaml.errors)
    for r, job in order:
        if isinstance(job, ParseError):
            tree.errors.append(job)
            continue
        model = models[job]
        if jobs[job][0] == "metal":
            tree.metals[r] = model
            tree.errors.extend(model.errors)
            continue
        hf, inline = model
        tree.hosts[r] = hf
        tree.errors.extend(hf.errors)
        tree.metals.update(_inline_keys(r, hf.inline_metal, inline))
    (s,) = side
    tree.sources.update(s.sources)
    tree.errors.extend(s.errors)
    tree.opinfo_files, tree.common_mps = s.opinfo_files, s.common_mps
    _add_native_facts(tree, native, models[first_native:])
    return tree


def _side_files(root: Path, overlay: dict[str, bytes]) -> Tree:
    """What load_tree reads besides the yaml, the MPS folder and the native sources, as a Tree of its own: the
    OpInfo files' bytes, common_mps.py's model.  Read while a parse child parses (parse_all's ``between``), so
    it costs the critical path half as much."""
    from migrate.tables import load_table

    read_common_mps = _lazy("migrate.read.xfail_reader", "read_common_mps")
    side = Tree(root=root, yaml=NativeYaml(YAML_REL, ()))
    for pattern in load_table("opinfo.yaml")["files"]:
        for f in sorted(root.glob(pattern)):
            rel_op = f.relative_to(root).as_posix()
            _read_bytes(side, f, rel_op, overlay)  # scanned lazily by the rules that need it
            side.opinfo_files.append(rel_op)
    cm = root / COMMON_MPS_REL
    if cm.is_file():
        data = _read_bytes(side, cm, COMMON_MPS_REL, overlay)
        if data is not None:
            side.common_mps = cached("common_mps", COMMON_MPS_REL, data, lambda: read_common_mps(data, COMMON_MPS_REL))
            side.errors.extend(side.common_mps.errors)
    return side


def read_yaml_job(data: bytes, path: str) -> NativeYaml:
    """The yaml's model, its index maps worked out (read.yaml_side.YamlSide): in the parse phase, where the
    other process's share of the parse balances them, and not after it, when this process alone runs the rules."""
    from migrate.read.yaml_reader import read_native_yaml

    yaml = read_native_yaml(data, path)
    yaml_side(yaml).work_out()
    return yaml


def read_host_job(data: bytes, path: str, include_dirs: list[Path]) -> tuple[HostFile, tuple[MetalFile, ...]]:
    """A host file's model and the models of its Metal raw strings (``inline_metal`` order): one parse job, so
    the process that reads a host file reads its Metal too."""
    from migrate.read.host_reader import read_host_file

    hf = read_host_file(data, path)
    return hf, tuple(_read_inline(path, im, include_dirs) for im in hf.inline_metal)


def _warm_host_job(datas: list[bytes], include_dirs: list[Path]) -> None:
    """read_host_job's readers' memos for these host files (parse_pool calls this before it forks its readers);
    the Metal reader's only when one of them can hold Metal."""
    from migrate.read import host_reader, metal_reader

    host_reader.warm()
    metal = [d for d in datas if host_reader.may_hold_metal(d)]
    if metal:
        metal_reader.warm(metal, include_dirs)


def _metal_job(job: tuple) -> bool:
    """Whether the tree's Metal view (metal_view) reads this job's model: a Metal file, or a host file that can
    hold Metal raw strings (parse_all's ``reads``: the parse child running the Metal rules parses them)."""
    kind, _, data, *_ = job
    if kind == "host":
        from migrate.read.host_reader import may_hold_metal

        return may_hold_metal(data)
    return kind == "metal"


read_host_job.warm = _warm_host_job  # type: ignore[attr-defined]


def _read_inline(path: str, im, includes: list[Path]) -> MetalFile:
    """The model of one Metal raw string (an InlineMetal) of host file ``path``."""
    from migrate.read.metal_reader import read_metal_source

    return read_metal_source(
        im.text.encode(),
        path,
        include_dirs=includes,
        base_line=im.span.line,
        base_offset=im.span.start,
        base_column=im.span.column,
    )


def _inline_keys(path: str, inline: tuple, models) -> dict:
    """``path#line`` -> the model of each Metal raw string of host file ``path``."""
    return {f"{path}#{im.span.line}": m for im, m in zip(inline, models)}


def metal_view(root: Path, parsed: list, includes: list[Path]) -> Tree:
    """The tree's Metal code alone, from ``parsed``: (job, its model or None) of load_tree's jobs, in the
    parse child that took every Metal job (``_metal_job``).  Kernel
    files with their models and bytes; host files holding Metal raw strings, as those strings only (read
    here for a host without a model) and the strings' models.  What the Metal data-flow rules read."""
    from migrate.read.host_reader import read_inline_metal

    tree = Tree(root=root, yaml=NativeYaml(YAML_REL, ()))
    for (kind, r, data, *_), model in parsed:
        if kind == "metal":  # the child running this parsed every Metal file the cache did not give
            tree.sources[r] = data
            tree.metals[r] = model
        elif kind == "host":
            if model is not None:
                inline, metals = model[0].inline_metal, model[1]
            else:  # a host file this process did not parse (none can hold Metal strings, _metal_job): checked alone
                inline = tuple(read_inline_metal(data, r))
                metals = tuple(_read_inline(r, im, includes) for im in inline)
            if inline:
                tree.sources[r] = data
                tree.hosts[r] = HostFile(r, (), (), (), (), inline, frozenset())
                tree.metals.update(_inline_keys(r, inline, metals))
    return tree


_NATIVE_KIND = {True: "native-decl", False: "native-scan"}  # parse job kinds (and cache kinds): .h, .cpp


def _native_sources(root: Path) -> list[tuple[str, bytes]]:
    """The native sources that can declare or reach a stub: (tree-relative path, bytes) of each
    aten/src/ATen/native/**.{h,cpp} outside mps/ that mentions one, in walk order (a full checkout has hundreds
    of them; each one's scan is a parse job, through the cache)."""
    found = []
    for r in _walk_rel(root, NATIVE_REL, (".h", ".cpp"), skip=MPS_REL):
        data, _ = _read(os.path.join(root, r), r, {})  # an unreadable one declares and reaches nothing
        if data is not None and (b"DECLARE_DISPATCH" in data or b"_stub" in data):
            found.append((r, data))
    return found


def scan_native_job(data: bytes, path: str):
    """A native source's stub facts (its parse job): a header's Spans of the stubs its DECLARE_DISPATCH lines
    name (the stub is the text they cover), a .cpp's kernels (scan_native_file); a ParseError when it cannot
    be scanned (never a traceback)."""
    from migrate.read.native_scan import scan_native_file

    try:
        if path.endswith(".h"):
            return tuple(s for _, s in scan_native_file(path, data)[0])
        return scan_native_file(path, data)[1]
    except (RecursionError, ValueError, UnicodeError) as exc:
        return ParseError(path, 1, 1, f"could not scan: {exc}", partial=True)


def _add_native_facts(tree: Tree, native: list[tuple[str, bytes]], facts: list) -> None:
    """Stub declarations (headers), which stubs each CPU-side kernel reaches and which at:: functions it calls
    (.cpp), from scan_native_job's value for each of ``native`` (in walk order: the first declaration wins)."""
    for (r, data), got in zip(native, facts):
        if isinstance(got, ParseError):
            tree.errors.append(got)
            continue
        spans, kernels = (got, ()) if r.endswith(".h") else ((), got)
        for span in spans:
            tree.declared_stubs.setdefault(data[span.start : span.end].decode("latin-1"), span)
        for kernel, stubs, at_calls in kernels:
            if stubs:
                tree.cpu_stub_calls[kernel] = tree.cpu_stub_calls.get(kernel, frozenset()) | frozenset(stubs)
            tree.native_at_calls[kernel] = tree.native_at_calls.get(kernel, frozenset()) | frozenset(at_calls)

"""Which launch convention a family's host code uses, and its emulation (the conventions themselves:
migrate/conventions/launch.py, over rules/launch_conventions.yaml).

``find_site`` reads the tree: the host call that launches the family (``lib.exec_*_kernel``,
``binary_mps_impl``, a file-local ``exec_unary_kernel`` over an inline ``MetalShaderLibrary``),
else a hand-written launch, which ``HandWritten`` refuses.  ``locate`` returns the
``KernelSource`` the runner compiles; ``planner`` the object whose ``plan(arity, it, name)``
picks the kernel and binds its buffers as that host does.  ``functor_registry`` is host.py's.
"""

from __future__ import annotations

import re
from pathlib import Path

from migrate.conventions.launch import (
    HandWritten,
    Site,
    conventions,
    function_body,
    host_text,
    line_at,
    name_pattern,
    promotes,
)
from migrate.conventions.scalar_launch import required_flags, scalar_site, scalar_value
from migrate.conventions.ternary_launch import ternary_site
from migrate.errors import UsageError
from migrate.tables import load_table

MPS_DIR = "aten/src/ATen/native/mps"


def candidate_functions(ix, family: str) -> list:
    """Host functions that implement ``family`` on MPS: registered for its stubs, or its MPS dispatch."""
    from migrate.verify.kernel_source import _stub_names

    names = [r.function for s in _stub_names(ix, family) for r in ix.registrations.get(s, ())]
    for e in ix.families.get(family, ()):
        line = ix.mps_line(e)
        if line is not None:
            names.append(line.kernel_name.split("::")[-1])
    fns = [ix.definition(n) for n in dict.fromkeys(names)]
    return [f for f in fns if f is not None]


_BINARY_IMPL = re.compile(rb'\b(binary_mps_impl)\s*\(\s*\w+\s*,\s*"(\w+)"\s*(?:,\s*(true|false))?\s*\)')
_LIBRARY = re.compile(rb"\bMetalShaderLibrary\s+(\w+)\s*[({]\s*(\w+)\s*(?:,\s*(\d+)\s*)?[)}]")


_WRAPPER_CALL = re.compile(rb'\b(\w+)\s*\(\s*\w+\s*,\s*"(\w+)"\s*\)')


def _wrapped_call(ix, fn) -> tuple[re.Match, str] | None:
    """A stub's call ``W(iter, "name")`` of a promoting wrapper W: (the match, W)."""
    for m in _WRAPPER_CALL.finditer(function_body(ix, fn)):
        callee = m.group(1).decode()
        wrapper = ix.definition(callee) if callee != "binary_mps_impl" else None
        if wrapper is not None and promotes(function_body(ix, wrapper)):
            return m, callee
    return None


def _binary_site(ix, fns) -> Site | None:
    for fn in fns:
        m = _BINARY_IMPL.search(function_body(ix, fn))
        wrapped = _wrapped_call(ix, fn) if m is None else None
        if wrapped is not None:
            m = wrapped[0]
        if m is None:
            continue
        impl = ix.definition("binary_mps_impl")
        marker = conventions()["binary_offsets"]["dense_marker"].encode()
        dense = (
            impl is not None and marker in function_body(ix, impl) and (wrapped is not None or m.group(3) != b"false")
        )
        data = host_text(ix, fn.path)
        return Site(
            "binary_offsets",
            m.group(2).decode(),
            "binary_mps_impl",
            2,
            fn.path,
            line_at(data, fn.span.start + m.start()),
            fn.name,
            dense=dense,
            promotes=wrapped[1] if wrapped is not None else "",
        )
    return None


def _call_site(ix, call) -> Site | None:
    if call.name in ix.functor_registrations:
        extra = _extra_argument(host_text(ix, call.path)[call.span.start : call.span.end])
        alpha = extra and any("ALPHA" in r.macro for r in ix.functor_registrations[call.name])
        return Site(
            "functor_registry",
            call.name,
            call.helper,
            0,
            call.path,
            call.span.line,
            call.function,
            extra=extra if alpha else "",
        )
    if call.helper != "exec_unary_kernel":
        return None
    if call.shared_library:
        return Site(
            "unary_1d",
            call.name,
            call.helper,
            1,
            call.path,
            call.span.line,
            call.function,
            extra=_extra_argument(host_text(ix, call.path)[call.span.start : call.span.end]),
        )
    m = _LIBRARY.search(host_text(ix, call.path))
    if m is not None and m.group(3):
        return Site(
            "unary_inline_template",
            call.name,
            call.helper,
            1,
            call.path,
            call.span.line,
            call.function,
            library_var=m.group(2).decode(),
        )
    return None


def _extra_argument(call_text: bytes) -> str:
    """The third top-level argument of a call's text (``exec_unary_kernel(iter, "x", decimals)``), or ""."""
    text = call_text.decode("utf-8", "replace")
    args, depth, cur = [], 0, ""
    for ch in text[text.find("(") + 1 :]:
        if ch in "([{" or (ch == ")" and depth) or ch in "]}":
            depth += 1 if ch in "([{" else -1
        elif ch in ",)" and depth == 0:
            args.append(cur.strip())
            cur = ""
            if ch == ")":
                break
            continue
        cur += ch
    return args[2] if len(args) > 2 else ""


def hand_written(ix, fns) -> str | None:
    """'function (path:line) launches its kernel by hand: getPipelineStateForFunc("x") + ...', or None."""
    pattern = load_table("launch_conventions.yaml")["hand_written"]
    for fn in fns:
        body = function_body(ix, fn).decode("utf-8", "replace")
        seen = {k: [w for w in pattern[k] if re.search(rf"\b{w}\b", body)] for k in pattern}
        if seen["pipeline"] and seen["dispatch"]:
            kernel = re.search(r'getPipelineStateFor\w*\(\s*("[^"]*"|\w+)', body)
            what = [f"{seen['pipeline'][0]}({kernel.group(1) if kernel else '...'})"]
            what += seen["arguments"][:1] + seen["dispatch"][:1]
            return f"{fn.name} ({fn.span.where}) launches its kernel by hand: {' + '.join(what)}"
    return None


def find_site(ix, family: str) -> Site:
    from migrate.verify.kernel_source import find_kernel_call

    arity = load_table("verify.yaml")["arity"]
    fns = candidate_functions(ix, family)
    site = scalar_site(ix, fns)
    if site is not None:
        site.scalar, site.scalar_from = scalar_value(ix, family, site.extra)
        site.reference_kwargs = required_flags(ix, family)
        return site
    try:
        call = find_kernel_call(ix, family)
    except UsageError:
        call = None
    site = _call_site(ix, call) if call is not None else None
    if site is not None:
        site.arity = site.arity or arity[call.helper]
        if site.convention == "functor_registry" and site.extra:  # exec_*_kernel(iter, name, alpha)
            site.scalar, site.scalar_from = scalar_value(ix, family, site.extra)
            site.reference_kwargs = required_flags(ix, family)
        return site
    site = ternary_site(ix, fns) or _binary_site(ix, fns)
    if site is not None:
        return site
    from migrate.verify.params_host import params_site

    site = params_site(ix, fns)
    if site is not None:
        return site
    why = hand_written(ix, fns)
    if why is not None:
        raise HandWritten(f"{family}: {why}; verify cannot emulate a hand-written launch")
    if call is not None:  # a modern call whose name no .metal file registers
        from migrate.verify.kernel_source import locate_error

        raise locate_error(call)
    raise UsageError(f"no native Metal kernel launch (exec_*_kernel, binary_mps_impl) found for {family!r}")


def scalar_read_at_storage_start(root: Path, ix) -> bool:
    """Whether the tree's mtl_setBuffer binds a CPU scalar by its storage's first element."""
    table = load_table("launch_conventions.yaml")
    rel = table["cpu_scalar_host_file"]
    try:
        data = (ix.tree.sources.get(rel) or (root / rel).read_bytes()).decode("utf-8", "replace")
    except OSError:
        return False
    m = re.search(r"\bmtl_setBuffer\s*\([^)]*\)\s*\{(.*?)\n\}", data, re.S)
    return m is not None and table["cpu_scalar_storage_start"] in m.group(1)


# ------------------------------------------------------------- kernel names
def input_dtypes(site: Site, names) -> list:
    """Input dtypes the tree's kernels cover for the site (from the exported host names)."""
    import torch

    from migrate.verify.dtypes import from_metal, from_name, ordered

    conv = conventions()[site.convention]
    if conv.get("library") == "inline":
        return ordered(from_name(n) for n in conv["input_dtypes"])
    found = []
    for key in ("kernel", "complex_kernel", "dense_kernel"):
        if key not in conv:
            continue
        rx = name_pattern(conv[key], site.name)
        for n in names:
            m = rx.match(n)
            if m is None:
                continue
            d = m.groupdict()
            if "real" in d:
                found.append({"float": torch.complex64}.get(d["real"]))
            elif "inp" in d and "out" not in d:
                found.append(from_metal(d["inp"]))
            elif "inp" in d:
                found.append(from_metal(d["inp"]))
    return ordered(d for d in found if d is not None)


def kernel_file(ix, site: Site) -> str:
    """The .metal file whose exports hold the site's kernels."""
    conv = conventions()[site.convention]
    rx = [name_pattern(conv[k], site.name) for k in ("kernel", "complex_kernel", "dense_kernel") if k in conv]
    for path, mf in sorted(ix.tree.metals.items()):
        if any(r.match(n) for n in mf.exports for r in rx):
            return path
    raise UsageError(
        f'{site.helper}(iter, "{site.name}"): no .metal file exports a kernel named like '
        f"{conv['kernel'].format(name=site.name, out='<out>', real='<real>', **{'in': '<in>'})}",
        site.path,
        site.line,
    )


def inline_source(root: Path, ix, site: Site) -> tuple[str, str]:
    """(path, raw-string text) of the source variable an inline MetalShaderLibrary is built from."""
    rx = re.compile(rb"\b" + re.escape(site.library_var.encode()) + rb'\s*=\s*R"(\w*)\((.*?)\)\1"', re.S)
    host = Path(site.path)
    places = [site.path] + sorted(str(p.relative_to(root)) for p in (root / MPS_DIR).glob("*.h"))
    places += sorted(str(p.relative_to(root)) for p in (root / host.parent).glob("*.h"))
    for rel in dict.fromkeys(places):
        try:
            data = ix.tree.sources.get(rel) or (root / rel).read_bytes()
        except OSError:
            continue
        m = rx.search(data)
        if m:
            return rel, m.group(2).decode("utf-8", "replace")
    raise UsageError(
        f"the source {site.library_var} of the MetalShaderLibrary is not a raw string in "
        f"{site.path} or a header next to it",
        site.path,
        site.line,
    )


def fmt_format(template: str, params: list[str]) -> str:
    """fmt::format with positional fields only ({0}, {1}; {{ and }} escape braces)."""

    def sub(m: re.Match) -> str:
        t = m.group(0)
        return t[0] if t in ("{{", "}}") else params[int(t[1:-1])]

    return re.sub(r"\{\{|\}\}|\{\d+\}", sub, template)


# ------------------------------------------------------------------ locate
def locate(root: Path, family: str, overlay: dict[str, bytes] | None = None, workdir: Path | None = None, index=None):
    """The family's KernelSource under whichever convention its host code uses."""
    from migrate.index import Index
    from migrate.tree import load_tree
    from migrate.verify import kernel_source as ks

    overlay = overlay or {}
    ix = index if index is not None else Index(load_tree(root, overlay=overlay))
    site = find_site(ix, family)
    site.scalar_at_storage_start = scalar_read_at_storage_start(root, ix)
    if site.convention == "functor_registry":
        source = ks.locate(root, family, overlay, workdir, index=ix)
        if site.scalar is not None:  # exec_*_kernel(iter, name, alpha): the Host binds it
            source.site = site
        source.operand_order = ks.operand_order(ix, family)
        return source
    template = ""
    if conventions()[site.convention].get("library") == "inline":
        path, template = inline_source(root, ix, site)
        text, dtypes = "", input_dtypes(site, ())
    else:
        path = kernel_file(ix, site)
        data = overlay.get(path, ix.tree.sources.get(path))
        text = (data if data is not None else (root / path).read_bytes()).decode("utf-8", errors="replace")
        dtypes = input_dtypes(site, ix.tree.metals[path].exports)
    return ks.KernelSource(
        family,
        site.name,
        site.helper,
        site.arity,
        path,
        text,
        [],
        ks.include_dirs(root, overlay, workdir),
        f"{site.path}:{site.line}",
        convention=site.convention,
        site=site,
        input_dtypes=dtypes,
        template=template,
        operand_order=ks.operand_order(ix, family),
    )

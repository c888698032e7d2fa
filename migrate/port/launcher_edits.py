"""Edits of a port that adds its own launcher beside ``binary_mps_impl`` (the scalar binary launcher, the
ternary launcher): in the kernel file the templates and their registration macro once, then the functor and
one macro use per dtype; in the host file the launcher once after ``binary_mps_impl``, the stub calling it
before the file's REGISTER_DISPATCH block and its registration after the block."""

from __future__ import annotations

import functools
import re
import string

from migrate.fixes import FixBuilder
from migrate.model import Edit
from migrate.port.emit import Plan, functor
from migrate.port.host_edits import dispatch_line
from migrate.port.host_name_kernels import _guarded
from migrate.conventions.target import Target
from migrate.port.translate import PortBlocked
from migrate.resources import kernels_dir

_line_end = FixBuilder.line_end


@functools.cache
def _template(name: str) -> string.Template:
    return string.Template((kernels_dir() / "port" / name).read_text(encoding="utf-8"))


def kernel_templates(name: str, register_macro: str) -> str:
    """kernels/port/NAME: the Metal text a launcher's port adds once per kernel file (its kernel templates and
    the ``[[host_name]]`` macro instantiating them, named ``register_macro``)."""
    return _template(name).substitute(register_macro=register_macro)


def continued(text: str) -> str:
    """Backslash-continue the #define block of ``text`` (its lines up to the end)."""
    lines = text.rstrip("\n").split("\n")
    start = next(i for i, x in enumerate(lines) if x.startswith("#define"))
    block = lines[start:]
    width = max(len(x) for x in block[:-1]) + 1
    return "\n".join(lines[:start] + [x.ljust(width) + "\\" for x in block[:-1]] + block[-1:]) + "\n"


def kernel_file_edits(target: Target, data: bytes, name: str, dag, plan: Plan, macro: str, templates: str):
    """``templates`` (ending in ``#define macro(NAME, DTYPE)``) once, as its own edit so that ports combined
    share one copy; then the functor and ``macro(name, T)`` per input dtype, at the end of the kernel file."""
    pos = len(data)
    lead = "" if data.endswith(b"\n") else "\n"
    edits = []
    if f"#define {macro}(".encode() not in data:
        edits.append(Edit(target.kpath, pos, pos, lead + continued(templates)))
        lead = ""
    text = "\n" + functor(name, dag, plan, dag.source, target.traits) + "\n"
    dtypes = list(dict.fromkeys(i for i, _ in plan.pairs()))
    text += "\n".join(_guarded([f"{macro}({name}, {t});" for t in dtypes], target)) + "\n"
    return edits + [Edit(target.kpath, pos, pos, lead + text)]


def namespace(target: Target) -> str:
    """The qualifier host stubs call ``binary_mps_impl`` with (``mps::``), for the launcher beside it."""
    return target.impl_call.rsplit("::", 1)[0] + "::" if "::" in target.impl_call else ""


def host_file_edits(ix, target: Target, launcher: str, launcher_text: str, stub: str, fn: str, fn_text: str):
    """``launcher_text`` after binary_mps_impl unless the file defines ``launcher``; ``fn_text`` (the stub
    function ``fn``) before the file's REGISTER_DISPATCH block, ``stub``'s registration after its last line."""
    data = ix.tree.sources[target.hpath]
    edits = []
    if not re.search(rb"\b" + launcher.encode() + rb"\s*\(\s*TensorIteratorBase", data):
        impl = ix.definition("binary_mps_impl")
        if impl is None or impl.path != target.hpath:
            raise PortBlocked(
                f"{target.hpath} does not define binary_mps_impl: no place for {launcher}",
                "no binary launcher",
                None,
            )
        pos = _line_end(data, impl.span.end - 1)
        edits.append(Edit(target.hpath, pos, pos, launcher_text))
    regs = [r for r in target.hf.registrations if r.macro == "REGISTER_DISPATCH" and not r.via_macro]
    rpos = _line_end(data, max(r.span.end for r in regs) - 1) if regs else len(data)
    first = min((r.span.start for r in regs), default=rpos)
    spos = data.rfind(b"\n\n", 0, first) + 1 if regs else rpos  # the blank line before the block
    edits.append(Edit(target.hpath, spos, spos, fn_text))
    edits.append(Edit(target.hpath, rpos, rpos, dispatch_line(data, regs, stub, fn)))
    return edits

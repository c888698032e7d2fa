"""The launch conventions of a tree's host code (rules/launch_conventions.yaml): for each one, the host
calls that launch a kernel, its registration macro and its kernel-name template.  Port emits them; verify
recognises them in the tree and runs the kernel as they do."""

from __future__ import annotations

import re
from dataclasses import dataclass

from migrate.conventions.host_expr import evaluate
from migrate.tables import load_table


class HandWritten(Exception):
    """The family's kernel is launched by host code verify cannot emulate (exit 2)."""


def conventions() -> dict:
    """Convention name -> its entry (``calls``, ``kernel``, ``register_macro``, ...)."""
    return load_table("launch_conventions.yaml")["conventions"]


def promotes(body: bytes) -> bool:
    """Whether a host function's body is a promoting wrapper of binary_mps_impl (launch_conventions.yaml)."""
    marks = conventions()["binary_offsets"]["promoting_wrapper"].values()
    return re.search(rb"\bbinary_mps_impl\s*\(", body) is not None and all(m.encode() in body for m in marks)


def name_pattern(template: str, name: str) -> re.Pattern:
    """``{name}_{out}_{in}`` -> a regex with groups out and inp; a repeated field must repeat its value."""
    rx, seen = "", set()
    for p in re.split(r"(\{\w+\})", template):
        field = {"in": "inp"}.get(p[1:-1], p[1:-1]) if p.startswith("{") else None
        if p == "{name}":
            rx += re.escape(name)
        elif field in seen:
            rx += f"(?P={field})"
        elif field:
            seen.add(field)
            rx += rf"(?P<{field}>\w+?)"
        else:
            rx += re.escape(p)
    return re.compile(rx + "$")


@dataclass
class Site:
    """Where a family's kernel is launched in the tree and how: its convention, the kernel name the host passes,
    the call's place, and what the launch binds besides the tensors."""

    convention: str
    name: str  # the kernel-name string the host passes
    helper: str  # exec_unary_kernel, binary_mps_impl, ...
    arity: int
    path: str  # host file of the call
    line: int
    function: str | None  # host function holding the call
    dense: bool = False  # binary_offsets: contiguous iterators use the dense kernel
    library_var: str = ""  # unary_inline_template: the MetalShaderLibrary's source variable
    scalar_at_storage_start: bool = False  # mtl_setBuffer sends a CPU scalar's storage().data()
    extra: str = ""  # unary_1d: the optional third argument's expression (round_decimals' decimals)
    promotes: str = ""  # binary_offsets: the promoting wrapper the stub calls (inputs cast to the common dtype)
    scalar: float | None = None  # unary_1d_scalar: the value bound for the run-time scalar (scalar_launch.py)
    scalar_from: str = ""  # where that value comes from
    reference_kwargs: tuple = ()  # (name, value) the torch reference also needs (a bool without default)
    params: tuple[str, ...] = ()  # params_1d: the struct's fields, in order (migrate/verify/params_host.py)
    scalar_values: list | None = None  # params_1d: the values verify binds (rules/scalar_args.yaml)
    params_type: str = ""  # functor_params: the struct's type-name prefix ("HardtanhBackwardParams_")
    exprs: tuple = ()  # per field: the host expression computing it from ``args`` (None: the argument itself)
    args: tuple[str, ...] = ()  # the stub's arguments after the iterator, when a field is an expression

    def field_values(self, dtype) -> list:
        """The struct's values for ``scalar_t`` = ``dtype``, before their cast to it."""
        if not any(self.exprs):
            return list(self.scalar_values)
        bound = dict(zip(self.args, self.scalar_values))
        return [evaluate(e, bound, dtype) if e else bound[f] for f, e in zip(self.params, self.exprs)]


def host_text(ix, path: str) -> bytes:
    """A file of the tree (the overlay's text where it has one)."""
    return ix.tree.sources.get(path) or (ix.tree.root / path).read_bytes()


def line_at(data: bytes, offset: int) -> int:
    """The 1-based line of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


def function_body(ix, fn) -> bytes:
    """The text of a host function of the tree."""
    return host_text(ix, fn.path)[fn.span.start : fn.span.end]


def launcher_binds(body: str) -> list[str] | None:
    m = re.search(r"\bmtl_setArgs\s*\(", body)
    if m is None:
        return None
    depth, cur, args = 0, "", []
    for ch in body[m.end() :]:
        if ch in "([{<" and not (ch == "<" and cur.strip() == ""):
            depth += ch in "([{"
        if ch in ")]}":
            if depth == 0:
                args.append(cur.strip())
                break
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    return args[1:]  # after the encoder


def launcher_call(ix, fns, conv: dict, more_args: bytes = b""):
    """The first call ``HELPER(iter, "name"MORE_ARGS);`` in ``fns`` of a launcher ``conv`` names, whose definition
    in the tree binds exactly ``conv["binds"]``: (fn, HELPER, its definition's body, the call's match); else None."""
    for helper in conv["calls"]:
        rx = re.compile(rb"\b" + helper.encode() + rb'\s*\(\s*\w+\s*,\s*"(\w+)"' + more_args + rb"\s*\)\s*;")
        for fn in fns:
            m = rx.search(function_body(ix, fn))
            if m is None:
                continue
            defn = ix.definition(helper)
            body = function_body(ix, defn) if defn is not None else b""
            if defn is None or launcher_binds(body.decode("utf-8", "replace")) != conv["binds"]:
                return None  # a launcher of that name that binds otherwise: not this convention
            return fn, helper, body, m
    return None

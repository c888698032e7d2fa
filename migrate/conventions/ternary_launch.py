"""The ``ternary_offsets`` launch (rules/launch_conventions.yaml): the file-local ``ternary_mps_impl(iter,
"name")`` a 2.7-era port writes (migrate/port/ternary_launcher.py).

Detected from the tree's code, as the scalar launchers are (scalar_launch.py): a host function of the
family calls the launcher, and the launcher's definition in the tree binds exactly the convention's
``binds`` through ``mtl_setArgs`` (anything else is not this convention).  TemplateHost emulates it.
"""

from __future__ import annotations

import re

from migrate.conventions.launch import Site, conventions, function_body, host_text, line_at
from migrate.conventions.scalar_launch import launcher_binds


def ternary_site(ix, fns) -> Site | None:
    conv = conventions()["ternary_offsets"]
    for helper in conv["calls"]:
        rx = re.compile(rb"\b" + helper.encode() + rb'\s*\(\s*\w+\s*,\s*"(\w+)"\s*\)\s*;')
        for fn in fns:
            m = rx.search(function_body(ix, fn))
            if m is None:
                continue
            defn = ix.definition(helper)
            if defn is None or launcher_binds(function_body(ix, defn).decode("utf-8", "replace")) != conv["binds"]:
                return None
            data = host_text(ix, fn.path)
            return Site(
                "ternary_offsets",
                m.group(1).decode(),
                helper,
                3,
                fn.path,
                line_at(data, fn.span.start + m.start()),
                fn.name,
                dense="dense_kernel" in conv,
                promotes=helper if conv.get("promotes") else "",
            )
    return None

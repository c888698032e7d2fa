"""The ``ternary_offsets`` launch (rules/launch_conventions.yaml): the file-local ``ternary_mps_impl(iter,
"name")`` a 2.7-era port writes (migrate/port/ternary_launcher.py).

Detected from the tree's code, as the scalar launchers are (``launch.launcher_call``): a host function of the
family calls the launcher, and the launcher's definition in the tree binds exactly the convention's
``binds`` through ``mtl_setArgs`` (anything else is not this convention).  TemplateHost emulates it.
"""

from __future__ import annotations

from migrate.conventions.launch import Site, conventions, host_text, launcher_call, line_at


def ternary_site(ix, fns) -> Site | None:
    conv = conventions()["ternary_offsets"]
    found = launcher_call(ix, fns, conv)
    if found is None:
        return None
    fn, helper, _, m = found
    return Site(
        "ternary_offsets",
        m.group(1).decode(),
        helper,
        3,
        fn.path,
        line_at(host_text(ix, fn.path), fn.span.start + m.start()),
        fn.name,
        dense="dense_kernel" in conv,
        promotes=helper if conv.get("promotes") else "",
    )

"""What a tree's host code does, read from the tree: the layer below both ``port`` and ``verify``.

Port writes host code in the tree's conventions and verify runs a kernel as that host code would; both
read the same facts here and neither imports the other.

- ``launch``: the launch conventions (rules/launch_conventions.yaml): each convention's host calls,
  registration macros and kernel-name templates, a promoting wrapper's marks, a hand-written launch.
- ``cpu_iter``: what a shared CPU kernel does with its TensorIterator (inputs and their order,
  whether it calls the stub on it, the scalars it negates).
- ``host_expr``: the scalars a host stub computes from its arguments, and their values per dtype.
- ``specialise``: a host function specialised for known argument values (which paths a call reaches).
- ``stub_choice``: which stub a host function calls for which arguments, and its dtype shortcuts.
"""

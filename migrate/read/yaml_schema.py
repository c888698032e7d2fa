"""What a native_functions.yaml entry may say, as torchgen reads it: its keys, and its schema string's name, overload
and out= arguments."""

from __future__ import annotations

# Keys torchgen's NativeFunction.from_yaml accepts; anything else is "leftover".
KNOWN_KEYS = frozenset(
    {
        "func",
        "variants",
        "dispatch",
        "structured",
        "structured_delegate",
        "structured_inherits",
        "ufunc_inner_loop",
        "tags",
        "autogen",
        "device_check",
        "device_guard",
        "manual_kernel_registration",
        "manual_cpp_binding",
        "python_module",
        "category_override",
        "precomputed",
        "cpp_no_default_args",
        "use_const_ref_for_mutable_tensors",
    }
)


def _split_schema(func: str) -> tuple[str, str, str | None]:
    """(name, overload, argument text) of ``[ns::]name[.overload](args) -> returns``.

    The argument text is what torchgen's decl_re captures (up to the LAST
    ``) -> ``); None when the schema does not have that shape.
    """
    i = func.find("(")
    head = func[:i] if i >= 0 else func
    if "::" in head:
        head = head.rsplit("::", 1)[1]
    name, _, overload = head.strip().partition(".")
    j = func.rfind(") -> ")
    return name, overload, (func[i + 1 : j] if 0 <= i < j else None)


def split_op_name(func: str) -> tuple[str, str]:
    """``atan2.out(...)`` -> ("atan2", "out"); a namespace (``aten::``) is dropped."""
    name, overload, _ = _split_schema(func)
    return name, overload


def _args_have_out(args: str) -> bool:
    if "!" not in args or "*" not in args:
        return False
    kwarg_only = False
    for arg in args.split(", "):
        if arg == "*":
            kwarg_only = True
        elif kwarg_only and arg.startswith("Tensor("):
            type_part = arg.split("=", 1)[0].rsplit(" ", 1)[0]
            close = type_part.rfind(")")
            if close > 7 and "!" in type_part[7:close].split(" -> ", 1)[0]:
                return True
    return False


def schema_is_out(func: str) -> bool:
    """torchgen's is_out_fn: a mutable (``Tensor(a!)``) argument after the ``*`` marker."""
    args = _split_schema(func)[2]
    return args is not None and _args_have_out(args)

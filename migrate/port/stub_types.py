"""The parameter types a dispatch stub declares (``DECLARE_DISPATCH(void (*)(TensorIteratorBase&, c10::Scalar),
clamp_max_scalar_stub)``, or through a ``using`` alias), so that a generated host function has the stub's exact
type: ``REGISTER_DISPATCH`` of ``(TensorIteratorBase&, const Scalar&)`` for a stub taking ``c10::Scalar`` by value
does not compile."""

from __future__ import annotations

import re

from migrate.source.params import split_params

_ALIAS = r"\busing\s+{name}\s*=\s*([^;]+);"


def declared_params(ix, stub: str) -> list[str] | None:
    """The stub function type's parameter types (``["TensorIteratorBase&", "c10::Scalar"]``), or None when the
    declaration is not found or not read."""
    span = ix.tree.declared_stubs.get(stub)
    if span is None:
        return None
    data = ix.tree.sources.get(span.path)  # the native headers are scanned, not kept: read it again
    if data is None:
        try:
            data = (ix.tree.root / span.path).read_bytes()
        except OSError:
            return None
    text = data.decode("utf-8", "surrogateescape")
    head = text.rfind("DECLARE_DISPATCH", 0, span.start)
    if head < 0:
        return None
    args = split_params(text[text.index("(", head) + 1 : span.start].rstrip().rstrip(",").encode())
    if len(args) != 1:
        return None
    fn_type = " ".join(args[0].split())
    if re.fullmatch(r"[\w:]+", fn_type):  # an alias: using NAME = void (*)(...);
        m = re.search(_ALIAS.format(name=re.escape(fn_type.rsplit("::", 1)[-1])), text)
        if m is None:
            return None
        fn_type = " ".join(m.group(1).split())
    if not fn_type.endswith(")"):
        return None
    depth, i = 0, len(fn_type) - 1
    for i in range(len(fn_type) - 1, -1, -1):  # the last parenthesised group: the parameters
        depth += fn_type[i] == ")"
        depth -= fn_type[i] == "("
        if depth == 0:
            break
    return split_params(fn_type[i + 1 : -1].encode())


def scalar_param(ix, stub: str, name: str, position: int = 1) -> str:
    """The declaration of the stub's Scalar parameter at ``position`` named ``name``: by value when the stub
    takes it by value, else ``const Scalar&``."""
    params = declared_params(ix, stub)
    if params and position < len(params) and "Scalar" in params[position] and "&" not in params[position]:
        return f"Scalar {name}"
    return f"const Scalar& {name}"


def iterator_param(ix, stub: str) -> str:
    """The iterator type the stub's function takes: ``TensorIterator&`` (activation_fn) or ``TensorIteratorBase&``."""
    params = declared_params(ix, stub)
    first = " ".join(params[0].split()) if params else ""
    return (
        "TensorIterator&" if re.fullmatch(r"(?:at::)?TensorIterator\s*&(?:\s*\w+)?", first) else "TensorIteratorBase&"
    )

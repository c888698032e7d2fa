"""The fast path of the native_functions.yaml reader: an entry of canonical shape is matched by one regex and
built directly, with the same objects the line scanner (yaml_reader._Scanner, the reference) builds."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

from migrate.model import DispatchLine, NativeEntry, Span, instance
from migrate.read.yaml_scalars import _BOOLS_B, _NL, _SPACE
from migrate.read.yaml_schema import KNOWN_KEYS, _args_have_out

# The fast path: an entry of canonical shape (ASCII; "- func:" first; keys at
# 2 spaces with plain values or [a, b] tags; one dispatch block at 4 spaces of
# "K1, K2: kernel" lines; comments and blank lines anywhere).  Any other entry
# goes through the line scanner, which is the reference for both.
_PLAIN = rb"[^ \"'#\[\]{}&*!|>%@`?:,\n\r\t-](?:[^:#\n\r\t]*[^ :#\n\r\t])?"
_CMT = rb"(?: +#[^\n]*)?\n"
_IGN = rb" *(?:#[^\n]*)?\n"
_IDENT = rb"[A-Za-z_][A-Za-z0-9_]*"
_DKEYS = _IDENT + rb"(?:, " + _IDENT + rb")*: " + _IDENT  # one space after each ',' and ':'
_DLINE = rb"    " + _DKEYS + _CMT
# The schema, a plain scalar (no ':' or '#'), in _split_schema's parts: the name, the overload and
# the arguments up to the last ") -> " (the greedy group backtracks from the line's end).
_FUNC = (
    rb"(?P<func>(?P<name>" + _IDENT + rb")\.?(?P<overload>[A-Za-z0-9_]*)"
    rb"\((?P<args>[^:#\n\r\t]*)\) -> [^:#\n\r\t]*[^ :#\n\r\t])"
)
# The value keys, the most frequent first (fewer failed tries).
_FAST_VALUE_KEYS = (
    "variants",
    "device_check",
    "tags",
    "python_module",
    "autogen",
    "structured_delegate",
    "structured",
    "structured_inherits",
    "device_guard",
    "cpp_no_default_args",
    "manual_cpp_binding",
    "use_const_ref_for_mutable_tensors",
    "category_override",
    "manual_kernel_registration",
)
assert set(_FAST_VALUE_KEYS) == KNOWN_KEYS - {"func", "dispatch", "ufunc_inner_loop", "precomputed"}


def _fast_entry_pattern(seen: Callable[[str], bytes]) -> bytes:
    """_FAST_ENTRY's text; ``seen(key)`` follows each key's name (a guard that fails on a second one).

    Groups: the schema's (_FUNC); each value key's value, named after the key; ``dispatch``, empty, at the
    dispatch key's ':'; its lines in ``block`` when they follow each other without comments, else in
    ``mixed``.  Every content line (not blank, not a comment) ends a group, so the last one to end
    (``lastindex``) is on the entry's last content line.  (Fewer groups, fewer marks the engine copies
    at each branch and repeat: an empty group at each content line's end cost ~20% more.)"""
    value = rb"(?:" + _PLAIN + rb"|\[[a-z_]+(?:, [a-z_]+)*\])"
    keys = b"|".join(k.encode() + seen(k) + b": (?P<" + k.encode() + b">" + value + b")" for k in _FAST_VALUE_KEYS)
    dispatch = (
        b"dispatch"
        + seen("dispatch")
        + b"(?P<dispatch>):(?:"
        + _CMT
        + rb"(?:(?P<block>(?:    "
        + _DKEYS
        + rb"\n)+)|(?P<mixed>(?:"
        + _IGN
        + b")*"
        + _DLINE
        + b"(?:(?:"
        + _IGN
        + b")*"
        + _DLINE
        + b")*))"
        + rb"| \{\}"
        + _CMT
        + b")"
    )
    return b"func: " + _FUNC + _CMT + b"(?:  (?:" + dispatch + b"|(?:" + keys + b")" + _CMT + b")|" + _IGN + b")*"


# A key's guard: fail if its group has matched already (a conditional may name a later group by number).
_FAST_GROUP = re.compile(_fast_entry_pattern(lambda key: b"")).groupindex
_FAST_ENTRY = re.compile(_fast_entry_pattern(lambda key: b"(?(%d)(?!))" % _FAST_GROUP[key]))
_FAST_FIELDS = tuple(  # the groups fast_entry reads
    _FAST_GROUP[g]
    for g in (
        "func",
        "name",
        "overload",
        "args",
        "structured",
        "structured_delegate",
        "structured_inherits",
        "tags",
        "manual_kernel_registration",
        "block",
        "mixed",
    )
)
_G_DISPATCH, _G_BLOCK, _G_MIXED = (_FAST_GROUP[g] for g in ("dispatch", "block", "mixed"))


# ------------------------------------------------------ fast construction
_new, _set = object.__new__, object.__setattr__  # model.instance, inlined where ~10k objects are made


def _fast_ctor(cls: type) -> Callable[..., Any]:
    """A keyword-only constructor for a frozen model dataclass that skips the
    per-field ``object.__setattr__`` of the generated ``__init__`` (2-3x faster;
    the reader builds ~20k objects).  It is ``cls`` itself whenever the shortcut
    would not build the very same object (``__post_init__``, slots, default
    factories, ``init=False`` fields).
    """
    fields = dataclasses.fields(cls)
    if (
        hasattr(cls, "__post_init__")
        or "__slots__" in cls.__dict__
        or any(not f.init or f.default_factory is not dataclasses.MISSING for f in fields)
    ):
        return cls
    names = frozenset(f.name for f in fields)
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    n = len(fields)

    def make(**kw: Any) -> Any:
        if len(kw) == n:  # every field given: the fresh kwargs dict becomes the instance dict
            return instance(cls, kw)
        obj = _new(cls)
        if kw.keys() <= names:
            d = obj.__dict__
            d.update(defaults)
            d.update(kw)
        else:
            return cls(**kw)  # let __init__ report the unknown field
        return obj

    return make


_make_span = _fast_ctor(Span)


def _dispatch_spans(path: str, ln: int, at: int, keys: tuple[str, ...], kernel: str) -> dict[str, object]:
    """A fast-path dispatch line's spans: the whole line, each key, the kernel.  ``at`` is the data offset
    of its first key, at column 5; one space follows each ',' and ':'.  Each number is computed anew, as
    the line scanner's are: the codec's marshal writes an int met twice as a back-reference."""
    if len(keys) == 1:
        ks = len(keys[0])
        key_spans: tuple[Span, ...] = (
            instance(
                Span,
                {
                    "path": path,
                    "line": ln,
                    "column": 5,
                    "end_line": ln,
                    "end_column": 5 + ks,
                    "start": at + 0,
                    "end": at + ks,
                },
            ),
        )
        ks += 2
    else:
        spans, ks = [], 0
        for k in keys:
            b = ks + len(k)
            spans.append(
                instance(
                    Span,
                    {
                        "path": path,
                        "line": ln,
                        "column": 5 + ks,
                        "end_line": ln,
                        "end_column": 5 + b,
                        "start": at + ks,
                        "end": at + b,
                    },
                )
            )
            ks = b + 2
        key_spans = tuple(spans)
    ke = ks + len(kernel)
    return {
        "span": instance(
            Span,
            {"path": path, "line": ln, "column": 5, "end_line": ln, "end_column": 5 + ke, "start": at, "end": at + ke},
        ),
        "key_spans": key_spans,
        "kernel_span": instance(
            Span,
            {
                "path": path,
                "line": ln,
                "column": 5 + ks,
                "end_line": ln,
                "end_column": 5 + ke,
                "start": at + ks,
                "end": at + ke,
            },
        ),
    }


_make_dispatch = _fast_ctor(DispatchLine)
_make_entry = _fast_ctor(NativeEntry)


def fast_entry(sc, c: bytes, lineno: int, off: int, newlines: int) -> bool:
    """Build the entry ``"- " + c`` (at byte ``off``, line ``lineno``; ``newlines``: c's count of "\\n") if
    it has the canonical shape (_FAST_ENTRY); False means: let the line scanner do it."""
    if not sc.plain and (not c.isascii() or b"\t" in c or b"\r" in c):
        return False
    cn = c + b"\n"
    m = _FAST_ENTRY.fullmatch(cn)
    if m is None:
        return False
    func, name_b, overload, args, structured, delegate, inherits, tags_raw, mkr, block, mixed = m.group(*_FAST_FIELDS)
    if (structured is not None and structured not in _BOOLS_B) or (mkr is not None and mkr not in _BOOLS_B):
        return False
    path, base = sc.path, off + 2  # data offset of c[0]
    at = m.start(_G_DISPATCH)
    if at < 0:
        dispatch: tuple[DispatchLine, ...] = ()
        dispatch_line = None
    else:
        dispatch_line = lineno + c.count(b"\n", 0, at)
        if block is not None:
            dispatch = sc.fast_dispatch(block, dispatch_line, base + m.start(_G_BLOCK), False)
        elif mixed is not None:
            dispatch = sc.fast_dispatch(mixed, dispatch_line, base + m.start(_G_MIXED), True)
        else:  # "dispatch: {}"
            dispatch = ()
    # The entry ends at its last content line (not blank, not a comment): e, the "\n" after it in cn.
    e = m.end(m.lastindex)  # in that line, or after it (a dispatch block's last "\n")
    if cn[e - 1] == _NL:
        e -= 1
    elif cn[e] != _NL:  # a comment, or "{}", follows
        e = cn.find(b"\n", e)
    after = len(c) - e  # c[e:]: "\n"s, blank and comment lines
    end_line = lineno + newlines - (after if after < 2 else c.count(b"\n", e))
    while c[e - 1] == _SPACE:  # a comment's trailing spaces
        e -= 1
    ls = c.rfind(b"\n", 0, e) + 1
    if tags_raw is None:
        tags: tuple[str, ...] = ()
    elif tags_raw[:1] == b"[":
        tags = tuple(tags_raw[1:-1].decode().split(", "))
    else:
        tags = (tags_raw.decode(),)
    name = name_b.decode()
    span, entry = _new(Span), _new(NativeEntry)  # model.instance, inlined
    _set(
        span,
        "__dict__",
        {
            "path": path,
            "line": lineno,
            "column": 1,
            "end_line": end_line,
            "end_column": e - ls + (1 if ls else 3),
            "start": off,
            "end": base + e,
        },
    )
    _set(
        entry,
        "__dict__",
        {
            "func": func.decode(),
            "name": name,
            "overload": overload.decode(),
            "span": span,
            "func_line": lineno,
            "dispatch": dispatch,
            "dispatch_line": dispatch_line,
            "dispatch_null": False,
            "structured": structured is not None and _BOOLS_B[structured],
            "structured_delegate": None if delegate is None else delegate.decode(),
            "structured_inherits": None if inherits is None else inherits.decode(),
            "ufunc_inner_loop": False,
            "tags": tags,
            "is_inplace": name.endswith("_") and not name.endswith("__"),
            "is_out": _args_have_out(args.decode()),  # str: ``bytes in bytes`` first fails as an int
            "manual_kernel_registration": mkr is not None and _BOOLS_B[mkr],
        },
    )
    sc.entries.append(entry)
    return True

"""A compact, fast serialisation of model objects for the parse cache (marshal, not pickle).

A dataclass instance becomes a list ``[class id, field values...]`` (the model uses
tuples and frozensets, never lists, so a list always means an object); decoding
rebuilds instances without calling ``__init__``. For the ~20k objects of
native_functions.yaml this loads about 3x faster than unpickling or re-parsing.
A field of plain frozensets goes as a tuple: since Python 3.11 marshal sorts a set's
marshalled elements (reproducible .pyc files), which made a host file's model (its
functions' identifier sets) about 10x slower to dump than the same values as tuples.
"""

from __future__ import annotations

import dataclasses
import marshal
from enum import Enum

from migrate import model

CLASSES = tuple(
    c
    for c in vars(model).values()
    if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ in (model.__name__, "migrate.source.span")
)
ENUMS = tuple(
    c for c in vars(model).values() if isinstance(c, type) and issubclass(c, Enum) and c.__module__ == model.__name__
)
_ID = {c: i for i, c in enumerate(CLASSES)}
_ID.update({c: -1 - i for i, c in enumerate(ENUMS)})  # an enum member: [-1 - enum id, value]
_FIELDS = tuple(tuple(f.name for f in dataclasses.fields(c)) for c in CLASSES)
_NAMES = {c.__name__ for c in CLASSES + ENUMS}
OBJECTS, PLAIN, SET = 1, 0, 2  # a field's annotation: may hold model objects / plain values / plain frozensets


def _field_kind(annotation) -> int:
    text = str(annotation)
    if any(n in text for n in _NAMES):
        return OBJECTS
    return SET if text.startswith("frozenset[") else PLAIN


_KINDS = tuple(tuple(_field_kind(f.type) for f in dataclasses.fields(c)) for c in CLASSES)
VERSION = marshal.dumps(
    (
        tuple((c.__name__, f) for c, f in zip(CLASSES, _FIELDS)),
        tuple((c.__name__, tuple(m.value for m in c)) for c in ENUMS),
        _KINDS,
    )
)  # part of cache keys


_PLAN = tuple(tuple(zip(names, kinds)) for names, kinds in zip(_FIELDS, _KINDS))  # per class: (field, kind)


def _enc(v):
    i = _ID.get(type(v))
    if i is None:
        return tuple(map(_enc, v)) if type(v) is tuple and v and type(v[0]) in _ID else v
    if i < 0:
        return [i, v.value]
    out = [i]
    for name, kind in _PLAN[i]:  # a field that holds no model object is copied as is (as loads reads it)
        x = getattr(v, name)
        out.append(x if kind == PLAIN else _enc(x) if kind == OBJECTS else tuple(x) if type(x) is frozenset else x)
    return out


def dumps(obj) -> bytes:
    return marshal.dumps(_enc(obj))


def loads(data: bytes):
    new = object.__new__

    def dec(v):
        cls = type(v)
        if cls is list:
            i = v[0]
            if i < 0:
                return ENUMS[-1 - i](v[1])
            o = new(CLASSES[i])
            d = o.__dict__
            for (name, kind), x in zip(_PLAN[i], v[1:]):
                d[name] = x if kind == PLAIN else dec(x) if kind == OBJECTS else frozenset(x) if type(x) is tuple else x
            return o
        if cls is tuple and v and type(v[0]) is list:
            return tuple(map(dec, v))
        return v

    return dec(marshal.loads(data))

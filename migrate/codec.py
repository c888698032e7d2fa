"""A compact, fast serialisation of model objects for the parse cache (marshal, not pickle).

A dataclass instance becomes a list ``[class id, field values...]`` (the model uses
tuples and frozensets, never lists, so a list always means an object); decoding
rebuilds instances without calling ``__init__``. For the ~20k objects of
native_functions.yaml this loads about 3x faster than unpickling or re-parsing.
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
# per class: for each field, whether its annotation can hold model objects (else it is copied as is)
_NESTED = tuple(tuple(any(n in str(f.type) for n in _NAMES) for f in dataclasses.fields(c)) for c in CLASSES)
VERSION = marshal.dumps(
    (
        tuple((c.__name__, f) for c, f in zip(CLASSES, _FIELDS)),
        tuple((c.__name__, tuple(m.value for m in c)) for c in ENUMS),
    )
)  # part of cache keys


_PLAN = tuple(tuple(zip(names, nested)) for names, nested in zip(_FIELDS, _NESTED))  # per class: (field, nested?)


def _enc(v):
    i = _ID.get(type(v))
    if i is None:
        return tuple(map(_enc, v)) if type(v) is tuple and v and type(v[0]) in _ID else v
    if i < 0:
        return [i, v.value]
    out = [i]
    for name, nested in _PLAN[i]:  # a field that holds no model object is copied as is (as loads reads it)
        x = getattr(v, name)
        out.append(_enc(x) if nested else x)
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
            for (name, nested), x in zip(_PLAN[i], v[1:]):
                d[name] = dec(x) if nested else x
            return o
        if cls is tuple and v and type(v[0]) is list:
            return tuple(map(dec, v))
        return v

    return dec(marshal.loads(data))

"""hypothesis profiles: ``ci`` (default) is derandomized, ``long`` (HYPOTHESIS_PROFILE=long) runs 10x longer."""

from __future__ import annotations

import os

from hypothesis import settings

PROFILES = {"ci": 1, "long": 10}  # profile -> multiplier of each test's example count


def profile() -> str:
    name = os.environ.get("HYPOTHESIS_PROFILE", "ci")
    if name not in PROFILES:
        raise ValueError(f"HYPOTHESIS_PROFILE={name!r}: expected one of {', '.join(PROFILES)}")
    return name


def load_profile() -> None:
    settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
    settings.register_profile("long", max_examples=1000, deadline=None, print_blob=True)
    settings.load_profile(profile())


def examples(n: int) -> int:
    """A test's example count under the active profile."""
    return n * PROFILES[profile()]


def _parts(obj):
    """Every Span and ParseError inside a model object."""
    import dataclasses

    from migrate.model import ParseError, Span

    if isinstance(obj, (Span, ParseError)):
        yield obj
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from _parts(getattr(obj, f.name))
    elif isinstance(obj, (tuple, list, frozenset, set)):
        for x in obj:
            yield from _parts(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _parts(x)


def check_read(model, data: bytes, reread, touched_from: int | None = None) -> None:
    """Properties of any reader's model of ``data``.

    Every span lies inside the file, on the lines it names, and every error on one of its
    lines; reading the bytes again, or through the cache's codec, gives the same model; with
    ``touched_from`` (the first byte an edit of a clean file changed), no error points before it.
    """
    from migrate import codec
    from migrate.model import ParseError

    lines = data.count(b"\n") + 1
    for p in _parts(model):
        if isinstance(p, ParseError):
            assert 1 <= p.line <= lines and p.column >= 1, p
            if touched_from is not None:
                assert p.line >= data.count(b"\n", 0, touched_from) + 1, (p, touched_from)
        else:
            assert 0 <= p.start <= p.end <= len(data), p
            assert p.line == data.count(b"\n", 0, p.start) + 1 and p.line <= p.end_line <= lines, p
    assert reread() == model
    assert codec.loads(codec.dumps(model)) == model

"""The parse cache's codec gives back equal models, for every reader's output."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate import codec
from migrate.cache import cached
from migrate.tree import load_tree
from tests.helpers import MINI, YAML

WHEEL_YAML = None
try:
    import torchgen

    WHEEL_YAML = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
except ImportError:  # pragma: no cover - torch is a test dependency
    pass


def test_round_trip_every_model_of_the_fixture_tree():
    from migrate.cache import disable_cache

    with disable_cache():
        tree = load_tree(MINI)
    models = [tree.yaml, tree.common_mps, *tree.hosts.values(), *tree.metals.values()]
    for m in models:
        assert codec.loads(codec.dumps(m)) == m
    assert any(h.functions and h.registrations for h in tree.hosts.values())  # real content went through


@pytest.mark.skipif(WHEEL_YAML is None or not WHEEL_YAML.is_file(), reason="torchgen's packaged yaml not installed")
def test_round_trip_real_yaml():
    from migrate.read.yaml_reader import read_native_yaml

    y = read_native_yaml(WHEEL_YAML.read_bytes(), YAML)
    back = codec.loads(codec.dumps(y))
    assert back == y and len(back.entries) > 2500
    assert type(back.entries[0].dispatch) is tuple


def test_cache_serves_the_same_model(tmp_path, monkeypatch):
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path))
    calls = []

    def parse():
        calls.append(1)
        return load_tree(MINI).yaml

    first = cached("yaml-test", YAML, b"same bytes", parse)
    second = cached("yaml-test", YAML, b"same bytes", parse)
    assert first == second and calls == [1]
    cached("yaml-test", YAML, b"other bytes", parse)
    assert calls == [1, 1]


def test_sets_go_as_tuples_and_come_back_as_frozensets():
    """marshal sorts a set's elements (Python 3.11+), which made dumps ~10x slower: the codec writes none."""
    import marshal

    from migrate.cache import disable_cache

    with disable_cache():
        tree = load_tree(MINI)
    host = next(h for h in tree.hosts.values() if any(f.identifiers for f in h.functions))

    def sets(v) -> int:
        if isinstance(v, (frozenset, set)):
            return 1
        return sum(map(sets, v)) if isinstance(v, (list, tuple)) else 0

    for m in (host, *tree.metals.values()):
        assert sets(marshal.loads(codec.dumps(m))) == 0
    back = codec.loads(codec.dumps(host))
    assert back == host and type(back.identifiers) is frozenset
    assert all(type(f.identifiers) is type(f.calls) is type(f.markers) is frozenset for f in back.functions)

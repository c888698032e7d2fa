"""Shared fixtures: compile each test TU once per session (cold cache OK)."""

from __future__ import annotations

import pytest

from migrate.device import get_backend


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("mps-migrate-cache")


@pytest.fixture(scope="session")
def cpu(cache_dir):
    mp = pytest.MonkeyPatch()
    mp.setenv("MPS_MIGRATE_CACHE", str(cache_dir))
    yield get_backend("cpu")
    mp.undo()

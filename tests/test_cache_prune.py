"""The cache folder's clean-up: the daily automatic prune and `mps-migrate cache`."""

from __future__ import annotations

import os
import time

from migrate import cache
from migrate.cache_prune import DAY, MAX_AGE_DAYS, STAMP, auto_prune, clean, parts
from tests.helpers import run_cli


def _entry(base, rel, age_days, size=10):
    f = base / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_bytes(b"x" * size)
    t = time.time() - age_days * DAY
    os.utime(f, (t, t))
    return f


def test_auto_prune_drops_only_old_entries_and_runs_once_a_day(tmp_path):
    old = _entry(tmp_path, "models/ab/old", MAX_AGE_DAYS + 1)
    young = _entry(tmp_path, "cpu-v1/lib/young.so", MAX_AGE_DAYS - 1)
    assert auto_prune(tmp_path)
    assert not old.exists() and young.exists()
    again = _entry(tmp_path, "models/ab/again", MAX_AGE_DAYS + 5)
    assert not auto_prune(tmp_path)  # stamp written less than a day ago
    assert again.exists()
    assert auto_prune(tmp_path, now=time.time() + DAY + 1)
    assert not again.exists()


def test_clean_all_and_older_than(tmp_path):
    _entry(tmp_path, "models/a", 3, size=7)
    _entry(tmp_path, "results/b", 1, size=5)
    assert [(p.name, p.files, p.bytes) for p in parts(tmp_path)] == [("models", 1, 7), ("results", 1, 5)]
    assert clean(tmp_path, 2) == (1, 7)
    assert clean(tmp_path) == (1, 5)
    assert parts(tmp_path) == []


def test_a_parse_miss_triggers_the_daily_prune(tmp_path, monkeypatch):
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path))
    monkeypatch.setattr(cache, "_PRUNED", [False])
    stale = _entry(tmp_path, "models/zz/stale", MAX_AGE_DAYS + 2)
    assert cache.cached("yaml", "a.yaml", b"data", lambda: ("parsed",)) == ("parsed",)
    assert not stale.exists() and (tmp_path / STAMP).exists()


def test_cache_command(tmp_path, monkeypatch):
    monkeypatch.setenv("MPS_MIGRATE_CACHE", str(tmp_path))
    _entry(tmp_path, "models/a", 40, size=2_000_000)
    _entry(tmp_path, "tables/b", 0, size=1_000_000)
    info = run_cli("cache")
    assert info.returncode == 0
    assert info.stdout.splitlines()[0] == f"{tmp_path}: 3.0 MB in 2 files"
    old = run_cli("cache", "clean", "--older-than", "30")
    assert old.stdout.strip() == f"removed 1 cache files (2.0 MB) from {tmp_path}"
    bad = run_cli("cache", "--older-than", "3")
    assert bad.returncode == 2 and bad.stderr.strip() == "mps-migrate: error: --older-than only goes with `cache clean`"
    assert run_cli("cache", "clean").stdout.strip() == f"removed 1 cache files (1.0 MB) from {tmp_path}"


def test_a_new_link_to_an_old_file_is_kept_and_an_old_link_dropped(tmp_path):
    system = _entry(tmp_path / "system", "objc.h", MAX_AGE_DAYS * 10)  # a system header, years old
    cache_dir = tmp_path / "cache"
    new_link = cache_dir / "host-v1" / "objc-include" / "objc" / "objc.h"
    new_link.parent.mkdir(parents=True)
    new_link.symlink_to(system)
    old_link = new_link.with_name("old.h")
    old_link.symlink_to(system)
    t = time.time() - (MAX_AGE_DAYS + 1) * DAY
    os.utime(old_link, (t, t), follow_symlinks=False)
    assert auto_prune(cache_dir)
    assert new_link.is_symlink() and not old_link.is_symlink() and system.exists()

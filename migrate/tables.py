"""Declarative tables under rules/ (one place per fact), loaded once."""

from __future__ import annotations

from functools import lru_cache

from migrate.resources import rules_dir


def load_yaml_text(text: str):
    import yaml  # imported on first use: a lint served from the result cache reads no table

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml: 10x faster


def load_yaml_bytes(name: str, data: bytes):
    """A rules/ yaml file's data, through the parse cache (a warm run does not import yaml)."""
    from migrate.cache import cached_plain

    return cached_plain("table", name, data, lambda: load_yaml_text(data.decode("utf-8")))


@lru_cache(maxsize=None)
def load_table(name: str):
    return load_yaml_bytes(name, (rules_dir() / name).read_bytes())


@lru_cache(maxsize=None)
def load_markers() -> dict[str, frozenset[str]]:
    return {k: frozenset(v) for k, v in load_table("markers.yaml").items()}


@lru_cache(maxsize=None)
def dispatch_keys(group: str) -> tuple[str, ...]:
    return tuple(load_table("dispatch.yaml")[group])


@lru_cache(maxsize=None)
def dtype_family(name: str) -> tuple[str, ...]:
    return tuple(load_table("dtypes.yaml")[name])


@lru_cache(maxsize=None)
def kernel_launch_helpers() -> tuple[str, ...]:
    """Host helpers that launch a named Metal kernel (every convention's ``calls``, launch_conventions.yaml)."""
    conventions = load_table("launch_conventions.yaml")["conventions"]
    return tuple(sorted({c for conv in conventions.values() for c in conv.get("calls", ())}))

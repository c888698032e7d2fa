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

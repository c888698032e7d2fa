"""The hypothesis profile in force: derandomized unless HYPOTHESIS_PROFILE=long asks for more."""

from __future__ import annotations

import os

from hypothesis import settings

from tests.fuzzing import examples


def test_active_profile():
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci":
        assert settings.default.derandomize and settings.default.database is None
        assert examples(25) == 25
    else:
        assert not settings.default.derandomize and examples(25) == 250

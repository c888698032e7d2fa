"""Every test starts from the same random state: random inputs are reproducible."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _seed_torch():
    try:
        import torch
    except ImportError:  # torch-free tests still run
        yield
        return
    torch.manual_seed(0)
    yield

"""Cases for families no OpInfo tests directly: drawn from the OpInfo samples of the operator that calls them.

``unfold_backward`` is what autograd runs for ``unfold``: each ``unfold`` sample (input, dim, size, step) gives a
gradient of the unfolded shape and ``aten.unfold_backward(grad, input.shape, dim, size, step)``.
"""

from __future__ import annotations


def _unfold_backward(sample, dtype):
    import torch

    dim, size, step = sample.args[:3]
    shape = sample.input.unfold(dim, size, step).shape
    gen = torch.Generator().manual_seed(0)
    if dtype.is_floating_point:
        grad = torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)
    else:
        grad = torch.randint(-9, 10, shape, generator=gen).to(dtype)
    return (grad, list(sample.input.shape), dim, size, step), {}


# family -> (the OpInfo whose samples are used, the aten overload called, how a sample becomes its arguments)
DERIVED = {"unfold_backward": ("unfold", "unfold_backward.default", _unfold_backward)}

"""Cases for families no OpInfo tests directly: drawn from the OpInfo samples of the operator that calls them.

``unfold_backward`` is what autograd runs for ``unfold``: each ``unfold`` sample (input, dim, size, step) gives a
gradient of the unfolded shape and ``aten.unfold_backward(grad, input.shape, dim, size, step)``.
``_prelu_kernel`` and ``_prelu_kernel_backward`` are what ``nn.functional.prelu`` runs: its weight viewed to
broadcast over the input's channel dimension as ``prelu`` views it, and (backward) a gradient of the input's shape.
``_softmax`` and ``_log_softmax`` (and the latter's backward) are what ``softmax`` and ``log_softmax`` run.
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


def _prelu_weight(sample):
    x = sample.input
    w = sample.args[0] if sample.args else sample.kwargs["weight"]
    if x.dim() != w.dim():
        shape = [1] * x.dim()
        if x.dim() > 1:
            shape[1] = w.numel()
        w = w.reshape(shape)
    return x, w


def _prelu_kernel(sample, dtype):
    return _prelu_weight(sample), {}


def _prelu_kernel_backward(sample, dtype):
    import torch

    x, w = _prelu_weight(sample)
    gen = torch.Generator().manual_seed(0)
    grad = torch.randn(x.shape, generator=gen, dtype=torch.float32).to(dtype)
    return (grad, x, w), {}


def _softmax_dim(sample):
    return sample.args[0] if sample.args else sample.kwargs.get("dim", -1)


def _softmax(sample, dtype):
    return (sample.input, _softmax_dim(sample), False), {}


def _log_softmax_backward(sample, dtype):
    import torch

    x, dim = sample.input, _softmax_dim(sample)
    gen = torch.Generator().manual_seed(0)
    grad = torch.randn(x.shape, generator=gen, dtype=torch.float32).to(dtype)
    return (grad, torch.log_softmax(x, dim), dim, dtype), {}


# family -> (the OpInfo whose samples are used, the aten overload called, how a sample becomes its arguments)
DERIVED = {
    "unfold_backward": ("unfold", "unfold_backward.default", _unfold_backward),
    "_prelu_kernel": ("nn.functional.prelu", "_prelu_kernel.default", _prelu_kernel),
    "_prelu_kernel_backward": ("nn.functional.prelu", "_prelu_kernel_backward.default", _prelu_kernel_backward),
    "_softmax": ("softmax", "_softmax.default", _softmax),
    "_log_softmax": ("log_softmax", "_log_softmax.default", _softmax),
    "_log_softmax_backward_data": ("log_softmax", "_log_softmax_backward_data.default", _log_softmax_backward),
}

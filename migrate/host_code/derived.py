"""Cases for families no OpInfo tests directly: drawn from the OpInfo samples of the operator that calls them.

``unfold_backward`` is what autograd runs for ``unfold``: each ``unfold`` sample (input, dim, size, step) gives a
gradient of the unfolded shape and ``aten.unfold_backward(grad, input.shape, dim, size, step)``.
``_prelu_kernel`` and ``_prelu_kernel_backward`` are what ``nn.functional.prelu`` runs: its weight viewed to
broadcast over the input's channel dimension as ``prelu`` views it, and (backward) a gradient of the input's shape.
The backward of an activation (``leaky_relu_backward``, ``softshrink_backward``, ``softplus_backward``) is what
autograd runs for its ``nn.functional`` op: a gradient of the input's shape, the input, the sample's scalars (or
their defaults).
``_softmax`` and ``_log_softmax`` (and the latter's backward) are what ``softmax`` and ``log_softmax`` run.
The padding and nearest-resize families take the samples of ``nn.functional.pad`` and ``nn.functional.interpolate``
that reach them, called as they are.
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


def _activation_backward(*params: tuple[str, float], tail: tuple = ()):
    """(grad, input, each of ``params`` from the sample's arguments or its default, *tail)."""

    def call(sample, dtype):
        import torch

        if not dtype.is_floating_point:
            return None  # autograd runs backward for floating dtypes only
        given = dict(zip((n for n, _ in params), sample.args)) | dict(sample.kwargs)
        gen = torch.Generator().manual_seed(0)
        grad = torch.randn(sample.input.shape, generator=gen, dtype=torch.float32).to(dtype)
        return (grad, sample.input, *(given.get(n, d) for n, d in params), *tail), {}

    return call


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


def _pad_of(entries: int):
    """The samples of ``nn.functional.pad`` whose pad list has ``entries`` values (1-d, 2-d or 3-d padding)."""

    def pick(sample, dtype):
        pad = sample.args[0] if sample.args else sample.kwargs["pad"]
        return ((sample.input, *sample.args), dict(sample.kwargs)) if len(pad) == entries else None

    return pick


def _resized_dims(dims: int):
    """The samples of ``nn.functional.interpolate`` that resize ``dims`` trailing dims (input rank dims + 2)."""

    def pick(sample, dtype):
        return ((sample.input, *sample.args), dict(sample.kwargs)) if sample.input.dim() == dims + 2 else None

    return pick


def _every(sample, dtype):
    return (sample.input, *sample.args), dict(sample.kwargs)


# family -> (the OpInfo whose samples are used ("name:variant" for a variant), the aten overload called (None: the
# OpInfo's own op), how a sample becomes its arguments (None: the sample reaches another family))
DERIVED = {
    "unfold_backward": ("unfold", "unfold_backward.default", _unfold_backward),
    "_prelu_kernel": ("nn.functional.prelu", "_prelu_kernel.default", _prelu_kernel),
    "_prelu_kernel_backward": ("nn.functional.prelu", "_prelu_kernel_backward.default", _prelu_kernel_backward),
    "_softmax": ("softmax", "_softmax.default", _softmax),
    "leaky_relu_backward": (
        "nn.functional.leaky_relu",
        "leaky_relu_backward.default",
        _activation_backward(("negative_slope", 0.01), tail=(False,)),
    ),
    "softshrink_backward": (
        "nn.functional.softshrink",
        "softshrink_backward.default",
        _activation_backward(("lambd", 0.5)),
    ),  # fmt: skip
    "softplus_backward": (
        "nn.functional.softplus",
        "softplus_backward.default",
        _activation_backward(("beta", 1.0), ("threshold", 20.0)),
    ),  # fmt: skip
    "constant_pad_nd": ("nn.functional.pad:constant", None, _every),
    **{f"reflection_pad{n}d": ("nn.functional.pad:reflect", None, _pad_of(2 * n)) for n in (1, 2, 3)},
    **{f"replication_pad{n}d": ("nn.functional.pad:replicate", None, _pad_of(2 * n)) for n in (1, 2, 3)},
    **{f"upsample_nearest{n}d": ("nn.functional.interpolate:nearest", None, _resized_dims(n)) for n in (1, 2)},
    **{
        f"_upsample_nearest_exact{n}d": ("nn.functional.interpolate:nearest-exact", None, _resized_dims(n))
        for n in (1, 2)
    },
    "_log_softmax": ("log_softmax", "_log_softmax.default", _softmax),
    "_log_softmax_backward_data": ("log_softmax", "_log_softmax_backward_data.default", _log_softmax_backward),
}

"""mps-migrate: move PyTorch MPS operators from MPSGraph to native Metal."""

__version__ = "0.1.0"

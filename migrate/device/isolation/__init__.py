"""Kernels under test run in a separate, confined worker process: a crash, a hang or a hostile
kernel ends in a KernelFault, never in the death of the caller. See docs/isolation.md."""

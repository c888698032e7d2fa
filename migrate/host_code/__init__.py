"""The tree's own Objective-C++ host code (`operations/*.mm`, `OperationUtils.mm`) compiled and run on Linux.

`toolchain` finds clang-19, GNU libobjc, the Blocks runtime and GNUstep's Foundation; `declarations` writes the
MPS declarations and registrations a real MPS build generates with torchgen; `units` compiles host files against the
shim SDK in `kernels/host_shim/`; `compile_tree` is `mps-migrate compile --host`.
"""

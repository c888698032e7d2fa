// mps-migrate host shim: the wheel's ResizeCommon.h, plus the named-tensor header that 2.6/2.7's included (host
// code of those trees reaches NoNamesGuard and at::namedinference through it).
#pragma once
#include_next <ATen/native/ResizeCommon.h>
#include <ATen/NamedTensorUtils.h>

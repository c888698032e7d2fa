#pragma once
#include <mach-o/dyld.h>

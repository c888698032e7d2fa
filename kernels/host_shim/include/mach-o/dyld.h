// mps-migrate host shim: the dyld image queries the bundled shader library makes (one image: libtorch_cpu).
#pragma once
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
struct mach_header;
struct mach_header_64 {
  uint32_t magic, cputype, cpusubtype, filetype, ncmds, sizeofcmds, flags, reserved;
};
uint32_t _dyld_image_count(void);
const char* _dyld_get_image_name(uint32_t image_index);
const struct mach_header* _dyld_get_image_header(uint32_t image_index);
uint8_t* getsectiondata(const struct mach_header_64* mhp, const char* segname, const char* sectname,
                        unsigned long* size);
#ifdef __cplusplus
}
#endif

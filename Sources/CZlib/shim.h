#ifndef HAUL_CZLIB_SHIM_H
#define HAUL_CZLIB_SHIM_H
#include <zlib.h>

/// deflateInit2 and inflateInit2 are macros; Swift cannot call them directly.
static inline int haul_deflateInit2(z_streamp strm, int level, int windowBits, int memLevel, int strategy) {
    return deflateInit2(strm, level, Z_DEFLATED, windowBits, memLevel, strategy);
}
static inline int haul_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}
#endif

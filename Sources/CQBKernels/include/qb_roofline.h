#ifndef QB_ROOFLINE_H
#define QB_ROOFLINE_H
#include <stdint.h>

// Micro-kernels that measure this machine's ceilings (quantbench roofline).

// Reads `bytes` (a multiple of 256) from `p` with wide loads; returns a checksum so the
// reads cannot be optimised away.
uint64_t qb_read_bandwidth_kernel(const void *p, int64_t bytes);
// Runs `iterations` rounds of independent fused multiply-adds on registers; returns the
// number of floating-point operations done (2 per lane per FMA).
double qb_fma_peak_kernel(int64_t iterations, float *sink);
// Runs `iterations` rounds of int8 dot products (u8 x s8 pairs summed to int32, the
// instructions the quantized kernels use); returns the number of int8 operations
// (2 per multiply-accumulate).
double qb_int8_peak_kernel(int64_t iterations, int32_t *sink);

#endif

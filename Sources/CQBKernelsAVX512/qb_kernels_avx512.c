// The kernels for AVX-512 CPUs: x86-64-v4 (AVX-512 F/BW/CD/DQ/VL on top of x86-64-v3) with
// VNNI, the flags in Package.swift. qb_dispatch.c picks this set only where cpuid and the OS
// report all of them. Empty elsewhere than x86-64 (the flags are only given there).
#if defined(__x86_64__)
#if !(defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512CD__) && defined(__AVX512DQ__) && \
      defined(__AVX512VL__) && defined(__AVX512VNNI__) && defined(__AVX2__) && defined(__FMA__) &&       \
      defined(__F16C__) && defined(__BMI2__))
#error "the avx512 kernel set must be compiled with -march=x86-64-v4 -mavx512vnni (Package.swift)"
#endif
#define QB_ISA avx512
#include "../CQBKernels/kernels/qb_isa_unit.h"
#else
typedef int qb_kernels_avx512_unused;  // ISO C wants a declaration in every file
#endif

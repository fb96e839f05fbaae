// The kernels for x86-64-v3 CPUs (AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE), the flags in
// Package.swift: the AVX2 paths of the sources, no AVX-512. Empty elsewhere than x86-64.
#if defined(__x86_64__)
#if !(defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__BMI2__)) || defined(__AVX512F__)
#error "the avx2 kernel set must be compiled with -march=x86-64-v3 (Package.swift)"
#endif
#define QB_ISA avx2
#include "../CQBKernels/kernels/qb_isa_unit.h"
#else
typedef int qb_kernels_avx2_unused;  // ISO C wants a declaration in every file
#endif

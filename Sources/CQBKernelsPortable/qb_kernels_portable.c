// The kernels in plain C (what the compiler makes of them for the target's baseline: SSE2 on
// x86-64, NEON on arm64): every CPU can run this set, and it keeps the package building
// where the intrinsics paths do not apply.
#if defined(__AVX__)
#error "the portable kernel set must be compiled without -march flags (Package.swift)"
#endif
#define QB_ISA portable
#include "../CQBKernels/kernels/qb_isa_unit.h"

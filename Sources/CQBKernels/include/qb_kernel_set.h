#ifndef QB_KERNEL_SET_H
#define QB_KERNEL_SET_H
#include <stdint.h>

// The kernels are compiled once per instruction set; every qb_* kernel entry point calls the
// active set's version. Sets in increasing order: a CPU that runs a set runs every set below
// it.
enum {
    QB_KERNELS_PORTABLE = 0,  // plain C, any CPU
    QB_KERNELS_AVX2 = 1,      // x86-64-v3: AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE
    QB_KERNELS_AVX512 = 2,    // x86-64-v4 (AVX-512 F/BW/CD/DQ/VL) with AVX-512 VNNI
    QB_KERNELS_COUNT = 3,
};

// The active set. Chosen at the first kernel call (or here): the best set this CPU runs
// (qb_kernel_set_best), or the set the environment variable QB_KERNELS names ("avx512",
// "avx2", "portable") when this CPU runs it; a name it does not know or a set it cannot run
// leaves the best.
int32_t qb_kernel_set(void);
// The best set this CPU (and the OS: AVX-512 needs it to save the wider registers) runs,
// from cpuid alone.
int32_t qb_kernel_set_best(void);
// Makes `set` the active one; returns 1, or 0 (nothing changed) when this CPU cannot run it
// or there is no such set. Only while no kernel runs: each call reads the set once, so a
// switch in the middle of a parallel section would mix sets within one product.
int32_t qb_kernel_set_use(int32_t set);
// "avx512", "avx2", "portable"; "" for a number that is no set.
const char *qb_kernel_set_name(int32_t set);
// Whether the one-row decode streams qb_set_stream_prefetch names (Q4_0, Q4_K and 4-bit MLX
// from sixteen-row groups, Q6_K from sixteen-row groups on the AVX-512 and AVX2 sets, Q8_0
// from four-row groups on the AVX-512 set) prefetch themselves (1) or leave it to the
// hardware prefetcher (0; the AVX2 set's Q4_K and Q6_K groups then hint L2 far ahead only):
// 0 on AMD CPUs from Zen 3 on, 1
// elsewhere, unless the environment variable QB_STREAM_PREFETCH (or its first name, QB_X16_PREFETCH) is "0" or "1".
// Every set is tuned so before the first is made active; results record it.
int32_t qb_kernel_stream_prefetch(void);
// Whether the avx512 set's Q4_K prefill meets its scales by vpdpwssd (1: on Intel's CPUs) or
// vpmulld (0: elsewhere), as every set is tuned (qb_set_q4k_dpwssd; the same outputs either
// way), unless the environment variable QB_Q4K_DPWSSD is "0" or "1".
int32_t qb_kernel_q4k_dpwssd(void);

#endif
